import { readFileSync } from 'fs';

/**
 * Instructions by function, JavaScript included. Callgrind names native functions but not the code V8 compiles at
 * run time, which it counts under anonymous addresses. With callgrind's `--dump-instr=yes` each count keeps its
 * instruction's address, and with node's `--perf-basic-prof` V8 writes where each compiled function's code lies
 * (`/tmp/perf-<pid>.map`: start, size, name per line, in the order the code was made); joining the two names the
 * JavaScript. Code V8 frees can be reused by later code at the same addresses: an address is given to the latest
 * function made there, so a count can land on a function made after the window (rarely, and small).
 */
interface CodeRange {
  start: number;
  end: number;
  name: string;
}

const codeMaps = new Map<string, CodeRange[]>();

/** A code map's ranges by start address, read once per file (a stack's windows share their process's map). */
function readCodeMap(file: string): CodeRange[] {
  const known = codeMaps.get(file);
  if (known) return known;
  const ranges: CodeRange[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [start, size, ...name] = line.split(' ');
    if (!name.length) continue;
    const from = parseInt(start, 16);
    ranges.push({ start: from, end: from + parseInt(size, 16), name: name.join(' ') });
  }
  // Stable: among ranges that start at one address the later-made stays later.
  ranges.sort((a, b) => a.start - b.start);
  codeMaps.set(file, ranges);
  return ranges;
}

/** The latest-made range holding `address`, looking back over the ranges that start before it. */
function codeAt(ranges: CodeRange[], address: number): string | undefined {
  let low = 0;
  let high = ranges.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (ranges[mid].start <= address) low = mid + 1;
    else high = mid;
  }
  for (let i = low - 1; i >= 0 && i >= low - 64; i--) if (ranges[i].end > address) return ranges[i].name;
  return undefined;
}

/** V8's markers of the tier a function was compiled for (`*` optimised, `^` baseline, `~` interpreted, `+` Maglev) go. */
const functionName = (name: string) => name.replace(/^JS:[*^~+]?/, 'JS:');

const COMPRESSED_NAME = /^c?fn=\((\d+)\)(?: (.*))?$/;

/**
 * Self instructions by function over callgrind dumps written with `--dump-instr=yes` (positions: instr line), V8's
 * tier markers dropped from JavaScript names so that a function's tiers sum.
 */
function selfByFunction(dumps: string[], ranges: CodeRange[]): Map<string, number> {
  const into = new Map<string, number>();
  for (const dump of dumps) {
    const names = new Map<string, string>();
    let fn = '?';
    let afterCall = false;
    const last = [0, 0];
    for (const line of readFileSync(dump, 'utf8').split('\n')) {
      const first = line[0];
      if (first === undefined || first === '#') continue;
      const named = COMPRESSED_NAME.exec(line);
      if (named) {
        if (named[2]) names.set(named[1], named[2]);
        if (line.startsWith('fn=')) {
          fn = names.get(named[1]) ?? '?';
          afterCall = false;
        }
        continue;
      }
      if (line.startsWith('calls=')) {
        // The line after a call holds the call's inclusive cost, not the caller's own.
        afterCall = true;
        continue;
      }
      if (/^[\d+*-]/.test(first)) {
        const fields = line.split(' ');
        for (let i = 0; i < 2; i++) {
          const field = fields[i];
          if (field === '*') continue;
          last[i] = field[0] === '+' ? last[i] + Number(field.slice(1)) : field[0] === '-' ? last[i] - Number(field.slice(1)) : Number(field);
        }
        if (afterCall) {
          afterCall = false;
          continue;
        }
        const name = fn.startsWith('0x') || fn === '???' || fn === '?' ? functionName(codeAt(ranges, last[0]) ?? 'compiled code not in the map') : fn;
        into.set(name, (into.get(name) ?? 0) + Number(fields[2] ?? 0));
      }
    }
  }
  return into;
}

/** A window's main-thread slices and the code map of its process. */
export interface FunctionDumps {
  dumps: string[];
  codeMap: string;
}

const idleCounts = new Map<string, Map<string, number>>();

/**
 * Self instructions per request by function in a window, less the idle window's rate over as long (its first slice
 * left out, as for the totals): what the requests themselves ran, function by function.
 */
export function perRequestByFunction(window: FunctionDumps, idle: FunctionDumps, requests: number): Map<string, number> {
  const counted = selfByFunction(window.dumps, readCodeMap(window.codeMap));
  // An idle window serves every scenario of its stack: counted once.
  const clockKey = idle.dumps.join('\n');
  const clock = idleCounts.get(clockKey) ?? selfByFunction(idle.dumps.slice(1), readCodeMap(idle.codeMap));
  idleCounts.set(clockKey, clock);
  const scale = window.dumps.length / Math.max(1, idle.dumps.length - 1);
  const out = new Map<string, number>();
  for (const name of new Set([...counted.keys(), ...clock.keys()])) out.set(name, ((counted.get(name) ?? 0) - (clock.get(name) ?? 0) * scale) / requests);
  return out;
}

import { execFileSync } from 'child_process';
import { BenchApp, machine } from './bench-stack';
import { FunctionDumps, perRequestByFunction } from './callgrind-functions';

/**
 * What bench:instructions keeps of each measured window, the arithmetic that turns a window into instructions
 * per request (main threads against platform workers; the charge for the processes' clock work, their pollers
 * and timers, either at the warm idle window's settled rate or at the window's own rest), and the report.
 */

/** A fixed-length window is dumped in this many equal slices, each thread to its own file (the main thread is thread 1). */
export const SLICES = 10;

export interface Window {
  round: number;
  build: string;
  scenario: string;
  requests: number;
  seconds: number;
  /** Instructions per process over the window. */
  ir: Partial<Record<BenchApp, number>>;
  dumps: string[];
  /** Fixed-length windows: when the last request was answered, and each process's main-thread and all-thread count per slice. */
  lastAnsweredS?: number;
  sliceMain?: Partial<Record<BenchApp, number[]>>;
  sliceAll?: Partial<Record<BenchApp, number[]>>;
  /** BENCH_INSTR_FUNCTIONS: that process's main-thread slices and its code map. */
  byFunction?: FunctionDumps;
}

/** How the run was made, as the report names it. */
export interface ReportSettings {
  counted: BenchApp[];
  windowS: number | undefined;
  byFunction: BenchApp | undefined;
  requests: number;
}

export interface Results {
  base: string;
  current: string;
  windows: Window[];
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const mean = (values: number[]) => sum(values) / values.length;
const fmt = (n: number) => Math.round(n).toLocaleString('en');
const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

function perRequest(w: Window): number {
  return sum(Object.values(w.ir)) / w.requests;
}

const workerIr = new Map<string, number>();

/**
 * Instructions a dump counts on V8's platform worker threads (the node binary's PlatformWorkerThread and all it
 * calls): optimising compilation of functions the JIT found hot, concurrent marking and parallel scavenging. The
 * rest ran on the main thread: the requests' own work, timers and pollers, and whatever of the collector runs there.
 */
function workerThreadIr(dump: string): number {
  if (!workerIr.has(dump)) {
    const text = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', dump], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
    const counts = [...text.matchAll(/^\s*([\d,]+) \(\s*[\d.]+%\)\s+[^\n]*?PlatformWorkerThread\(void\*\)/gm)].map((m) => Number(m[1].replace(/,/g, '')));
    // One line per calling context callgrind tells apart (`PlatformWorkerThread(void*)` and its `'2` cycle), together the threads.
    workerIr.set(dump, sum(counts));
  }
  return workerIr.get(dump)!;
}

/** Instructions a window counts on the processes' main threads (all threads less the platform workers'). */
const mainIr = (w: Window) =>
  w.sliceMain ? sum(Object.values(w.sliceMain).map((slices) => sum(slices!))) : sum(Object.values(w.ir)) - sum(w.dumps.map(workerThreadIr));

/**
 * What the stack runs a slice with nothing to do: each process's mean slice of an idle window, leaving out its first
 * slice (which may still hold the tail of the window before), summed. The mean, not the median: a process's clock
 * work comes in bursts (a poll a second, a look every 30 s), and a window pays for every burst.
 */
const settledOf = (counts: number[]) => mean(counts.slice(1));
const settledSlice = (idle: Window, slices: 'sliceMain' | 'sliceAll') => sum(Object.values(idle[slices]!).map((counts) => settledOf(counts!)));

/** At most this many of a fixed window's last slices are its own rest: those that start after the last answer and the work it set off. */
const REST_SLICES = 3;
/** What a write sets off after its answer (the relay, the consumers) is done this long after it. */
const SETTLE_S = 2;

/**
 * A process's main-thread instructions per request in a fixed window, less its own rest: the mean of the window's
 * last REST_SLICES slices charged for every slice. The warm idle window comes minutes later, in another state
 * (its pollers' tables, its heap), and its rate can differ from what the same process settles to right after the
 * requests by as much as a fifth; the window's own rest is measured in the same process a few seconds later.
 */
function lessOwnRest(w: Window, app: string, windowS: number | undefined): number {
  const slices = w.sliceMain?.[app as BenchApp];
  if (!slices || !windowS) return NaN;
  // A machine too slow for the pacing answers late: its rest starts later, and fewer slices hold it.
  const firstAtRest = Math.ceil(((w.lastAnsweredS ?? windowS) + SETTLE_S) / (windowS / SLICES));
  const rest = slices.slice(Math.max(firstAtRest, SLICES - REST_SLICES));
  return rest.length ? (sum(slices) - SLICES * mean(rest)) / w.requests : NaN;
}

/** Per request, on the processes' main threads only (all threads less the platform workers'). */
function mainThreadPerRequest(w: Window): number {
  return mainIr(w) / w.requests;
}

/** A fixed-length window's stack idle and warm for as long: same build, same round. */
function warmIdleOf(windows: Window[], w: Window): Window | undefined {
  return windows.find((o) => o.scenario === 'idle, warm' && o.build === w.build && o.round === w.round && o.sliceMain !== undefined);
}

/** The spread of a build's rounds: (max − min) / mean. */
function spread(values: number[]): number {
  return values.length > 1 ? (Math.max(...values) - Math.min(...values)) / mean(values) : 0;
}

/** The tables of a run: per request, with the clock charged each way, by process, by function where counted, and the idle stack. */
export function report(results: Results, dumpDir: string, run: ReportSettings): string {
  const { counted: COUNTED, windowS: WINDOW_S, byFunction: BY_FUNCTION, requests: N } = run;
  const builds = [`base ${results.base}`, `this ${results.current}`];
  const of = (build: string, scenario: string) => results.windows.filter((w) => w.build === build && w.scenario === scenario);
  const rounds = new Set(results.windows.map((w) => w.round)).size;
  const n = results.windows.find((w) => w.requests)?.requests ?? N;
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}; ${rounds} rounds, builds alternating, each on a fresh stack; ${n} sequential requests per measured window after ${n} warm-up requests; processes counted: ${COUNTED.join(', ')}; dumps in ${dumpDir}.`,
    '',
    '| Scenario | Build | main threads: instructions/request (mean of rounds) | rounds | spread | vs base | all threads (mean) | rounds | spread | vs base | window s |',
    '|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|',
  ];
  const scenarios = [...new Set(results.windows.map((w) => w.scenario))].filter((s) => !s.startsWith('idle'));
  for (const scenario of scenarios) {
    const baseMeans = [mean(of(builds[0], scenario).map(mainThreadPerRequest)), mean(of(builds[0], scenario).map(perRequest))];
    for (const build of builds) {
      const windows = of(build, scenario);
      if (!windows.length) continue;
      const cells = [mainThreadPerRequest, perRequest].map((measure, i) => {
        const values = windows.map(measure);
        return `${fmt(mean(values))} | ${values.map(fmt).join(' / ')} | ${pct(spread(values))} | ${(mean(values) / baseMeans[i]).toFixed(3)}`;
      });
      lines.push(`| ${scenario} | ${build} | ${cells.join(' | ')} | ${windows.map((w) => w.seconds.toFixed(0)).join(' / ')} |`);
    }
  }
  if (results.windows.some((w) => w.sliceMain)) {
    // Every window as long as the idle one: the clock's work is charged at the idle stack's settled rate, per slice.
    const lessSettledIdle = (slices: 'sliceMain' | 'sliceAll') => (w: Window) => {
      const idle = warmIdleOf(results.windows, w);
      const counted = slices === 'sliceMain' ? mainIr(w) : sum(Object.values(w.ir));
      return idle?.[slices] ? (counted - SLICES * settledSlice(idle, slices)) / w.requests : NaN;
    };
    const lessIdleWindow = (w: Window) => {
      const idle = warmIdleOf(results.windows, w);
      return idle ? (mainIr(w) - mainIr(idle)) / w.requests : NaN;
    };
    const stackLessOwnRest = (w: Window) => sum(Object.keys(w.sliceMain!).map((app) => lessOwnRest(w, app, WINDOW_S)));
    const measures = [lessSettledIdle('sliceMain'), lessIdleWindow, lessSettledIdle('sliceAll'), stackLessOwnRest];
    lines.push(
      '',
      `Per request, less what the idle stack runs in as long (${SLICES} slices of ${WINDOW_S ?? '?'} s windows; "settled idle": each process's mean idle slice after the first; "idle window": the whole warm idle window; "own rest": each process's mean of the window's last slices (at most ${REST_SLICES}) that start ${SETTLE_S} s or more after its last answer):`,
      '',
      '| Scenario | Build | main threads less settled idle | rounds | spread | vs base | main threads less idle window | vs base | all threads less settled idle | vs base | main threads less own rest | vs base | last answer s | main threads, last slice / settled idle slice |',
      '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    );
    for (const scenario of scenarios) {
      const baseMeans = measures.map((m) => mean(of(builds[0], scenario).map(m)));
      for (const build of builds) {
        const windows = of(build, scenario);
        if (!windows.length) continue;
        const values = measures.map((m) => windows.map(m));
        const vs = (i: number) => (mean(values[i]) / baseMeans[i]).toFixed(3);
        const tail = windows
          .map((w) => {
            const idle = warmIdleOf(results.windows, w);
            const last = sum(Object.values(w.sliceMain!).map((slices) => slices![SLICES - 1]));
            return idle?.sliceMain ? (last / settledSlice(idle, 'sliceMain')).toFixed(2) : '?';
          })
          .join(' / ');
        lines.push(
          `| ${scenario} | ${build} | ${fmt(mean(values[0]))} | ${values[0].map(fmt).join(' / ')} | ${pct(spread(values[0]))} | ${vs(0)} | ${fmt(mean(values[1]))} | ${vs(1)} | ${fmt(mean(values[2]))} | ${vs(2)} | ${fmt(mean(values[3]))} | ${vs(3)} | ${windows.map((w) => w.lastAnsweredS?.toFixed(0)).join(' / ')} | ${tail} |`,
        );
      }
    }
    const apps = COUNTED.filter((app) => results.windows.some((w) => w.sliceMain?.[app]));
    lines.push(
      '',
      `Main threads per request by process, millions of instructions, less settled idle / less own rest:`,
      '',
      '| Scenario | Build | ' + apps.join(' | ') + ' |',
      '|---|---|' + apps.map(() => '---:').join('|') + '|',
    );
    for (const scenario of scenarios) {
      for (const build of builds) {
        const windows = of(build, scenario).filter((w) => w.sliceMain);
        if (!windows.length) continue;
        const cell = (app: BenchApp) => {
          const settled = mean(
            windows.map((w) => {
              const idle = warmIdleOf(results.windows, w)?.sliceMain?.[app];
              return idle ? (sum(w.sliceMain![app]!) - SLICES * settledOf(idle)) / w.requests : NaN;
            }),
          );
          return `${(settled / 1e6).toFixed(2)} / ${(mean(windows.map((w) => lessOwnRest(w, app, WINDOW_S))) / 1e6).toFixed(2)}`;
        };
        lines.push(`| ${scenario} | ${build} | ${apps.map(cell).join(' | ')} |`);
      }
    }
  }
  if (results.windows.some((w) => w.byFunction)) lines.push(...functionTables(results, builds, scenarios, BY_FUNCTION));
  lines.push('', '| Scenario | Build | ' + COUNTED.join(' | ') + ' |', '|---|---|' + COUNTED.map(() => '---:').join('|') + '|');
  for (const scenario of scenarios) {
    for (const build of builds) {
      const windows = of(build, scenario);
      if (!windows.length) continue;
      lines.push(`| ${scenario} | ${build} | ${COUNTED.map((app) => fmt(mean(windows.map((w) => (w.ir[app] ?? 0) / w.requests)))).join(' | ')} |`);
    }
  }
  for (const build of builds) {
    const idle = of(build, 'idle, warm');
    if (idle.length && idle[0].sliceMain) {
      lines.push(`| idle, warm (a whole window) | ${build} | ${COUNTED.map((app) => fmt(mean(idle.map((w) => w.ir[app] ?? 0)))).join(' | ')} |`);
    }
  }
  lines.push('', '| Idle stack | Build | all threads: instructions/s | main threads: instructions/s |', '|---|---|---:|---:|');
  for (const [scenario, label] of [
    ['idle', 'right after start-up'],
    ['idle, warm', 'after the scenarios'],
  ]) {
    for (const build of builds) {
      const idle = of(build, scenario);
      if (!idle.length) continue;
      const all = mean(idle.map((w) => sum(Object.values(w.ir)) / w.seconds));
      const main = mean(idle.map((w) => mainIr(w) / w.seconds));
      lines.push(`| ${label} | ${build} | ${fmt(all)} | ${fmt(main)} |`);
    }
  }
  return lines.join('\n');
}

/** Per scenario, the functions whose own instructions per request differ most between the builds (first round of each). */
function functionTables(results: Results, builds: string[], scenarios: string[], byFunction: BenchApp | undefined): string[] {
  const lines: string[] = [];
  for (const scenario of scenarios) {
    const [base, current] = builds.map((build) => {
      const w = results.windows.find((o) => o.build === build && o.scenario === scenario && o.byFunction);
      const idle = w && warmIdleOf(results.windows, w);
      return w?.byFunction && idle?.byFunction ? perRequestByFunction(w.byFunction, idle.byFunction, w.requests) : undefined;
    });
    if (!base || !current) continue;
    const names = [...new Set([...base.keys(), ...current.keys()])];
    const delta = (name: string) => (current.get(name) ?? 0) - (base.get(name) ?? 0);
    names.sort((a, b) => Math.abs(delta(b)) - Math.abs(delta(a)));
    lines.push('', `${scenario}, ${byFunction ?? 'the counted process'}, main thread: own instructions per request by function, the 25 that differ most`, '');
    lines.push('| Function | base | this | difference |', '|---|---:|---:|---:|');
    for (const name of names.slice(0, 25)) {
      lines.push(`| \`${name.slice(0, 120).replace(/\|/g, '\\|')}\` | ${fmt(base.get(name) ?? 0)} | ${fmt(current.get(name) ?? 0)} | ${fmt(delta(name))} |`);
    }
  }
  return lines;
}

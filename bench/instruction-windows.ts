import { execFileSync } from 'child_process';
import { BenchApp } from './bench-stack';
import { FunctionDumps } from './callgrind-functions';

/**
 * What bench:instructions keeps of each measured window, and the arithmetic that turns a window into instructions
 * per request: main threads against platform workers, and the charge for the processes' clock work (their pollers
 * and timers), either at the warm idle window's settled rate or at the window's own rest.
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

export interface Results {
  base: string;
  current: string;
  windows: Window[];
}

export const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
export const mean = (values: number[]) => sum(values) / values.length;
export const fmt = (n: number) => Math.round(n).toLocaleString('en');
export const pct = (n: number) => `${(n * 100).toFixed(1)}%`;

export function perRequest(w: Window): number {
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
export const mainIr = (w: Window) =>
  w.sliceMain ? sum(Object.values(w.sliceMain).map((slices) => sum(slices!))) : sum(Object.values(w.ir)) - sum(w.dumps.map(workerThreadIr));

/**
 * What the stack runs a slice with nothing to do: each process's mean slice of an idle window, leaving out its first
 * slice (which may still hold the tail of the window before), summed. The mean, not the median: a process's clock
 * work comes in bursts (a poll a second, a look every 30 s), and a window pays for every burst.
 */
export const settledOf = (counts: number[]) => mean(counts.slice(1));
export const settledSlice = (idle: Window, slices: 'sliceMain' | 'sliceAll') => sum(Object.values(idle[slices]!).map((counts) => settledOf(counts!)));

/** At most this many of a fixed window's last slices are its own rest: those that start after the last answer and the work it set off. */
export const REST_SLICES = 3;
/** What a write sets off after its answer (the relay, the consumers) is done this long after it. */
export const SETTLE_S = 2;

/**
 * A process's main-thread instructions per request in a fixed window, less its own rest: the mean of the window's
 * last REST_SLICES slices charged for every slice. The warm idle window comes minutes later, in another state
 * (its pollers' tables, its heap), and its rate can differ from what the same process settles to right after the
 * requests by as much as a fifth; the window's own rest is measured in the same process a few seconds later.
 */
export function lessOwnRest(w: Window, app: string, windowS: number | undefined): number {
  const slices = w.sliceMain?.[app as BenchApp];
  if (!slices || !windowS) return NaN;
  // A machine too slow for the pacing answers late: its rest starts later, and fewer slices hold it.
  const firstAtRest = Math.ceil(((w.lastAnsweredS ?? windowS) + SETTLE_S) / (windowS / SLICES));
  const rest = slices.slice(Math.max(firstAtRest, SLICES - REST_SLICES));
  return rest.length ? (sum(slices) - SLICES * mean(rest)) / w.requests : NaN;
}

/** Per request, on the processes' main threads only (all threads less the platform workers'). */
export function mainThreadPerRequest(w: Window): number {
  return mainIr(w) / w.requests;
}

/** A fixed-length window's stack idle and warm for as long: same build, same round. */
export function warmIdleOf(windows: Window[], w: Window): Window | undefined {
  return windows.find((o) => o.scenario === 'idle, warm' && o.build === w.build && o.round === w.round && o.sliceMain !== undefined);
}

/** The spread of a build's rounds: (max − min) / mean. */
export function spread(values: number[]): number {
  return values.length > 1 ? (Math.max(...values) - Math.min(...values)) / mean(values) : 0;
}

import { EventLoopUtilization, performance } from 'perf_hooks';
import { getHeapStatistics } from 'v8';

/**
 * Gives back the heap V8 grew for a burst of work once the process has gone quiet.
 *
 * V8 grows its young generation (to 2 × 16 MiB) and keeps old-space pages while a process allocates
 * fast: at start-up and under load. It shrinks them again only after a full collection made while the
 * allocation rate is low, and its memory reducer, which would run one, is started by embedder signals
 * Node never sends. So an idle service kept 70–80 MiB of heap around 35 MiB of live objects, about
 * 30 MiB of resident memory per process, indefinitely (measured in docs/benchmarks.md, "Idle memory").
 *
 * Every CHECK_MS this looks at how busy the event loop was since the last look; after a quiet look
 * (utilization under QUIET_UTILIZATION) with more than MIN_SLACK_BYTES of heap kept beyond what is live,
 * it asks V8 for the low-memory collection (the one `HeapProfiler.collectGarbage` runs: full, compacting,
 * shrinking the young generation and releasing pooled pages). Under load the loop is never quiet, so it
 * never runs there and V8 keeps its sizing for throughput; at most one trim per MIN_GAP_MS bounds its cost
 * on a lightly loaded process. An idle process, once trimmed, has no slack to give back and only looks.
 */
export const IDLE_HEAP_TRIM = {
  CHECK_MS: 30_000,
  QUIET_UTILIZATION: 0.02,
  MIN_SLACK_BYTES: 8 * 2 ** 20,
  MIN_GAP_MS: 5 * 60_000,
};

export interface IdleHeapTrimProbes {
  /** Event-loop utilization since `since` (as `performance.eventLoopUtilization`). */
  utilization(since?: EventLoopUtilization): EventLoopUtilization;
  /** Heap V8 keeps and heap in use, in bytes. */
  heap(): { total: number; used: number };
  now(): number;
  /** The low-memory collection. */
  collect(): Promise<void>;
}

export class IdleHeapTrim {
  private last: EventLoopUtilization;
  private lastTrimAt = -Infinity;
  private running = false;

  constructor(
    private readonly probes: IdleHeapTrimProbes = nodeProbes,
    private readonly options = IDLE_HEAP_TRIM,
  ) {
    this.last = probes.utilization();
  }

  /** One look; answers whether it trimmed. */
  async check(): Promise<boolean> {
    const now = this.probes.utilization();
    const quiet = this.probes.utilization(this.last).utilization < this.options.QUIET_UTILIZATION;
    this.last = now;
    if (!quiet || this.running || this.probes.now() - this.lastTrimAt < this.options.MIN_GAP_MS) return false;
    const { total, used } = this.probes.heap();
    if (total - used <= this.options.MIN_SLACK_BYTES) return false;
    this.running = true;
    try {
      await this.probes.collect();
      this.lastTrimAt = this.probes.now();
      return true;
    } finally {
      this.running = false;
    }
  }

  /** Looks every CHECK_MS until the returned function is called; the timer never keeps the process alive. */
  start(onError: (err: unknown) => void = () => undefined): () => void {
    const timer = setInterval(() => this.check().catch(onError), this.options.CHECK_MS);
    timer.unref();
    return () => clearInterval(timer);
  }
}

/**
 * The low-memory collection through an in-process inspector session (no port is opened): Node exposes
 * no other way to it without `--expose-gc`, and plain `gc()` neither shrinks the young generation nor
 * releases pooled pages.
 */
async function lowMemoryCollection(): Promise<void> {
  const { Session } = await import('inspector');
  const session = new Session();
  session.connect();
  try {
    await new Promise<void>((resolve, reject) => session.post('HeapProfiler.collectGarbage', (err) => (err ? reject(err) : resolve())));
  } finally {
    session.disconnect();
  }
}

const nodeProbes: IdleHeapTrimProbes = {
  utilization: (since) => performance.eventLoopUtilization(since),
  heap: () => {
    const stats = getHeapStatistics();
    return { total: stats.total_heap_size, used: stats.used_heap_size };
  },
  now: () => performance.now(),
  collect: lowMemoryCollection,
};

/** Starts trimming the heap of a serving process when it goes quiet (see IdleHeapTrim); answers the stop. */
export function startIdleHeapTrim(onError?: (err: unknown) => void): () => void {
  return new IdleHeapTrim().start(onError);
}

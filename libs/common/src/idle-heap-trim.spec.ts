import { EventLoopUtilization } from 'perf_hooks';
import { IDLE_HEAP_TRIM, IdleHeapTrim, IdleHeapTrimProbes } from './idle-heap-trim';

const MiB = 2 ** 20;

/** A process whose event-loop use, heap and clock the test sets between looks. */
function fakeProcess() {
  const state = { busyMs: 0, idleMs: 0, total: 80 * MiB, used: 35 * MiB, now: 0, collections: 0 };
  const elu = (): EventLoopUtilization => ({ active: state.busyMs, idle: state.idleMs, utilization: 0 });
  const probes: IdleHeapTrimProbes = {
    utilization: (since) => {
      const now = elu();
      if (!since) return now;
      const active = now.active - since.active;
      const idle = now.idle - since.idle;
      return { active, idle, utilization: active / (active + idle || 1) };
    },
    heap: () => ({ total: state.total, used: state.used }),
    now: () => state.now,
    collect: async () => {
      state.collections++;
      state.total = state.used + 2 * MiB;
    },
  };
  /** One check interval passes with the loop busy for `busyShare` of it. */
  const pass = (busyShare: number) => {
    const ms = IDLE_HEAP_TRIM.CHECK_MS;
    state.busyMs += ms * busyShare;
    state.idleMs += ms * (1 - busyShare);
    state.now += ms;
  };
  return { state, probes, pass };
}

describe('IdleHeapTrim', () => {
  it('gives the heap back after a quiet interval, and not again while nothing grows', async () => {
    const p = fakeProcess();
    const trim = new IdleHeapTrim(p.probes);
    p.pass(0.001);
    expect(await trim.check()).toBe(true);
    expect(p.state.total).toBe(37 * MiB);
    for (let i = 0; i < 20; i++) {
      p.pass(0.001);
      expect(await trim.check()).toBe(false);
    }
    expect(p.state.collections).toBe(1);
  });

  it('never runs while the process is busy, whatever the heap keeps', async () => {
    const p = fakeProcess();
    const trim = new IdleHeapTrim(p.probes);
    p.state.total = 300 * MiB;
    for (let i = 0; i < 20; i++) {
      p.pass(0.3);
      expect(await trim.check()).toBe(false);
    }
    expect(p.state.collections).toBe(0);
    p.pass(0.01);
    expect(await trim.check()).toBe(true);
  });

  it('leaves a heap with little slack alone', async () => {
    const p = fakeProcess();
    const trim = new IdleHeapTrim(p.probes);
    p.state.total = p.state.used + IDLE_HEAP_TRIM.MIN_SLACK_BYTES;
    p.pass(0);
    expect(await trim.check()).toBe(false);
  });

  it('trims at most once per MIN_GAP_MS on a process that keeps growing between quiet looks', async () => {
    const p = fakeProcess();
    const trim = new IdleHeapTrim(p.probes);
    const trims: number[] = [];
    for (let i = 0; i < 40; i++) {
      p.state.total = p.state.used + 20 * MiB;
      p.pass(0.01);
      if (await trim.check()) trims.push(p.state.now);
    }
    expect(trims.length).toBeGreaterThan(1);
    for (let i = 1; i < trims.length; i++) expect(trims[i] - trims[i - 1]).toBeGreaterThanOrEqual(IDLE_HEAP_TRIM.MIN_GAP_MS);
  });

  it('shrinks a real heap that a burst of allocation grew', async () => {
    // The production probes: the in-process inspector's collection must give back what a burst left.
    const trim = new IdleHeapTrim(undefined, { ...IDLE_HEAP_TRIM, QUIET_UTILIZATION: 1.01, MIN_SLACK_BYTES: 0 });
    let keep: object[] = [];
    for (let i = 0; i < 500_000; i++) {
      keep.push({ i, s: `x${i}` });
      if (keep.length > 100_000) keep = keep.slice(50_000);
    }
    keep = [];
    const before = process.memoryUsage().heapTotal;
    expect(await trim.check()).toBe(true);
    expect(process.memoryUsage().heapTotal).toBeLessThan(before);
  });
});

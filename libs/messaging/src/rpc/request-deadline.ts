import { AsyncLocalStorage } from 'async_hooks';
import { performance } from 'perf_hooks';

/**
 * The moment (on this process's monotonic clock) the caller of the request in progress stops waiting for
 * its answer: set around every request a service handles (the RequestDeadline step), from the wait the
 * caller sent with it (`ctx.timeout_ms`). The calls the request makes to other services wait no longer,
 * and say so in turn, so a whole chain of requests ends when its first caller gives up.
 */
const deadlineScope = new AsyncLocalStorage<number>();

/** Runs `work` as a request whose caller waits `timeoutMs` from now. */
export function withDeadline<T>(timeoutMs: number, work: () => T): T {
  return deadlineScope.run(performance.now() + timeoutMs, work);
}

/**
 * Runs `work` outside the request in progress: no deadline bounds its queries or its calls. For work that
 * outlasts one call's wait by design and is asked for again until it is done (an erasure's step).
 */
export function withoutDeadline<T>(work: () => T): T {
  return deadlineScope.exit(work);
}

/** Milliseconds before the caller of the request in progress stops waiting (zero or less once it has); undefined outside a request. */
export function timeLeftMs(): number | undefined {
  const deadline = deadlineScope.getStore();
  return deadline === undefined ? undefined : deadline - performance.now();
}

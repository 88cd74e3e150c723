import { JsMsg } from 'nats';

/** The consumer's iterator ended although nobody stopped the reader (consumer gone, broker restart). */
export class ConsumerClosed extends Error {
  constructor() {
    super('the JetStream consumer closed');
  }
}

const STOP = Symbol('stop');
const IDLE = Symbol('idle');

/*
 * Why the stop is an AbortSignal and not a promise: each Promise.race leaves a reaction on every
 * contender still pending, and a reaction stays until its promise settles. Raced against a stop promise
 * that stays pending for the process's life, every race's reaction stayed, and with it the race's own
 * promise and what it resolved to: each message a consumer ever received (a JsMsg and its bytes), a few
 * MiB a minute under load. Here each wait adds a listener to the signal and removes it when it ends.
 */

/**
 * The waits pending on each stop signal. A signal gets one 'abort' listener, the first time a wait names
 * it, which ends every wait then pending; each wait only joins and leaves a set. Adding and removing a
 * listener of Node's EventTarget for every wait, twice per message a consumer receives, cost more than
 * the wait itself.
 */
const pendingWaits = new WeakMap<AbortSignal, Set<() => void>>();

function waitsOn(stopped: AbortSignal): Set<() => void> {
  let waits = pendingWaits.get(stopped);
  if (!waits) {
    const created = new Set<() => void>();
    stopped.addEventListener('abort', () => [...created].forEach((stop) => stop()), { once: true });
    pendingWaits.set(stopped, created);
    waits = created;
  }
  return waits;
}

/** How many waits on `stopped` are pending: none once every wait has ended. */
export function waitsPending(stopped: AbortSignal): number {
  return pendingWaits.get(stopped)?.size ?? 0;
}

/**
 * Resolves to STOP once `stopped` aborts, or to what `arm` resolves first; `arm` answers how to undo what
 * it started (a timer). `done` leaves the signal's pending waits and undoes the timer, so nothing outlives the wait.
 */
function stoppable<T>(stopped: AbortSignal, arm: (resolve: (v: T) => void) => () => void): { wait: Promise<T | typeof STOP>; done: () => void } {
  let disarm = () => {};
  let onStop = () => {};
  const wait = new Promise<T | typeof STOP>((resolve) => {
    onStop = () => resolve(STOP);
    disarm = arm(resolve);
  });
  const waits = waitsOn(stopped);
  if (stopped.aborted) onStop();
  else waits.add(onStop);
  return {
    wait,
    done: () => {
      waits.delete(onStop);
      disarm();
    },
  };
}

/**
 * Groups what a `consume()` iterator delivers into batches: a batch is handed on as soon as it is full,
 * or once no message has arrived for `lingerMs`. Messages are pushed by the server as they are
 * published, so a lone event waits only the linger, never a pull request's expiry; under load the
 * batches fill while the previous one is handled. With `lingerMs` 0 a batch is handed on as soon as no
 * further message is already waiting: batches then form only from what arrived while the last one was
 * handled, which costs a reader more transactions at moderate rates and spares each event the linger.
 * Ends when `stopped` aborts.
 */
export async function* messageBatches(messages: AsyncIterable<JsMsg>, batchSize: number, lingerMs: number, stopped: AbortSignal): AsyncGenerator<JsMsg[]> {
  const iterator = messages[Symbol.asyncIterator]();
  let next = iterator.next();
  let batch: JsMsg[] = [];
  for (;;) {
    const interrupt = stoppable<typeof IDLE>(stopped, (resolve) => {
      if (!batch.length) return () => {};
      // A message already received resolves `next` in a microtask, before an immediate runs.
      if (lingerMs > 0) {
        const timer = setTimeout(() => resolve(IDLE), lingerMs);
        return () => clearTimeout(timer);
      }
      const immediate = setImmediate(() => resolve(IDLE));
      return () => clearImmediate(immediate);
    });
    const outcome = await Promise.race<IteratorResult<JsMsg> | typeof IDLE | typeof STOP>([next, interrupt.wait]);
    interrupt.done();
    if (outcome === STOP) return;
    if (outcome === IDLE) {
      yield batch;
      batch = [];
      continue;
    }
    if (outcome.done) throw new ConsumerClosed();
    batch.push(outcome.value);
    next = iterator.next();
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
}

/** Waits `ms`, or less when `stopped` aborts first; answers whether the wait ran its course. */
export async function sleepUnlessStopped(ms: number, stopped: AbortSignal): Promise<boolean> {
  const sleep = stoppable<typeof IDLE>(stopped, (resolve) => {
    const timer = setTimeout(() => resolve(IDLE), ms);
    return () => clearTimeout(timer);
  });
  const outcome = await sleep.wait;
  sleep.done();
  return outcome === IDLE;
}

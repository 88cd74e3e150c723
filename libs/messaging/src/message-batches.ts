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
 * Resolves to STOP once `stopped` aborts, or to what `arm` resolves first; `arm` answers how to undo what
 * it started (a timer). `done` removes the listener and the timer, so nothing outlives the wait.
 */
function stoppable<T>(stopped: AbortSignal, arm: (resolve: (v: T) => void) => () => void): { wait: Promise<T | typeof STOP>; done: () => void } {
  let disarm = () => {};
  let onStop = () => {};
  const wait = new Promise<T | typeof STOP>((resolve) => {
    onStop = () => resolve(STOP);
    disarm = arm(resolve);
  });
  if (stopped.aborted) onStop();
  else stopped.addEventListener('abort', onStop);
  return {
    wait,
    done: () => {
      stopped.removeEventListener('abort', onStop);
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

import { JsMsg } from 'nats';

/** The consumer's iterator ended although nobody stopped the reader (consumer gone, broker restart). */
export class ConsumerClosed extends Error {
  constructor() {
    super('the JetStream consumer closed');
  }
}

const STOP = Symbol('stop');
const IDLE = Symbol('idle');

/**
 * Groups what a `consume()` iterator delivers into batches: a batch is handed on as soon as it is full,
 * or once no message has arrived for `lingerMs`. Messages are pushed by the server as they are
 * published, so a lone event waits only the linger, never a pull request's expiry; under load the
 * batches fill while the previous one is handled. With `lingerMs` 0 a batch is handed on as soon as no
 * further message is already waiting: batches then form only from what arrived while the last one was
 * handled, which costs a reader more transactions at moderate rates and spares each event the linger.
 * Ends when `stopped` resolves.
 */
export async function* messageBatches(messages: AsyncIterable<JsMsg>, batchSize: number, lingerMs: number, stopped: Promise<unknown>): AsyncGenerator<JsMsg[]> {
  const stop = stopped.then((): typeof STOP => STOP);
  const iterator = messages[Symbol.asyncIterator]();
  let next = iterator.next();
  let batch: JsMsg[] = [];
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    let immediate: NodeJS.Immediate | undefined;
    // A message already received resolves `next` in a microtask, before an immediate runs.
    const idle = batch.length
      ? new Promise<typeof IDLE>((resolve) => {
          if (lingerMs > 0) timer = setTimeout(() => resolve(IDLE), lingerMs);
          else immediate = setImmediate(() => resolve(IDLE));
        })
      : undefined;
    const outcome = await Promise.race<IteratorResult<JsMsg> | typeof IDLE | typeof STOP>(idle ? [next, stop, idle] : [next, stop]);
    clearTimeout(timer);
    clearImmediate(immediate);
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

/** Waits `ms`, or less when `stopped` resolves first; answers whether the wait ran its course. */
export async function sleepUnlessStopped(ms: number, stopped: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const slept = new Promise<typeof IDLE>((resolve) => (timer = setTimeout(() => resolve(IDLE), ms)));
  const outcome = await Promise.race([slept, stopped.then((): typeof STOP => STOP)]);
  clearTimeout(timer);
  return outcome === IDLE;
}

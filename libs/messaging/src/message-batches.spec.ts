import { getEventListeners } from 'events';
import { JsMsg } from 'nats';
import { setFlagsFromString } from 'v8';
import { runInNewContext } from 'vm';
import { messageBatches, sleepUnlessStopped, waitsPending } from './message-batches';

/** A full collection, on demand: the flag must be set before a context is made for `gc` to exist in it. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** A `consume()` stand-in the test feeds by hand: `push` delivers a message the way the server's push does. */
function feed() {
  const waiting: JsMsg[] = [];
  let wake: (() => void) | undefined;
  const push = (...seqs: number[]) => {
    waiting.push(...seqs.map((seq) => ({ seq }) as JsMsg));
    wake?.();
  };
  async function* messages(): AsyncGenerator<JsMsg> {
    for (;;) {
      while (waiting.length) yield waiting.shift()!;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  return { push, messages: messages() };
}

const seqsOf = (batch: JsMsg[]) => batch.map((m) => m.seq);

describe('messageBatches', () => {
  let controller: AbortController;
  let stopped: AbortSignal;
  const stop = () => controller.abort();

  beforeEach(() => {
    controller = new AbortController();
    stopped = controller.signal;
  });
  afterEach(() => stop());

  it('with no linger, hands on what is already waiting as one batch, without waiting for more', async () => {
    const { push, messages } = feed();
    push(1, 2, 3);
    const batches = messageBatches(messages, 100, 0, stopped);
    expect(seqsOf((await batches.next()).value)).toEqual([1, 2, 3]);
    // Nothing else comes while nobody pushes: the next batch is exactly the next arrival.
    const second = batches.next();
    push(4);
    expect(seqsOf((await second).value)).toEqual([4]);
  });

  it('with a linger, keeps a batch open for messages that arrive within it', async () => {
    const { push, messages } = feed();
    push(1);
    const batches = messageBatches(messages, 100, 60_000, stopped);
    const first = batches.next();
    // A full batch is handed on at once; a long linger would otherwise keep it open for a minute.
    setImmediate(() => push(...Array.from({ length: 99 }, (_, i) => i + 2)));
    expect(seqsOf((await first).value)).toHaveLength(100);
  });

  it('ends when stopped', async () => {
    const { push, messages } = feed();
    push(1);
    const batches = messageBatches(messages, 100, 60_000, stopped);
    const first = batches.next();
    stop();
    expect(await first).toEqual({ done: true, value: undefined });
  });

  it('keeps no message it handed on reachable while the reader runs: the stop it waits on holds nothing of each wait', async () => {
    const { push, messages } = feed();
    const batches = messageBatches(messages, 1, 0, stopped);
    const handed: Array<WeakRef<JsMsg>> = [];
    for (let seq = 1; seq <= 50; seq++) {
      const next = batches.next();
      push(seq);
      handed.push(new WeakRef((await next).value[0]));
    }
    // The reader is still running: its next wait is armed, as it is for a consumer between messages.
    const pending = batches.next();
    expect(waitsPending(stopped)).toBe(1);
    expect(getEventListeners(stopped, 'abort')).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    // The latest may still be held by the stand-in feeding it; none before it may be.
    expect(handed.filter((ref) => ref.deref() !== undefined).map((ref) => ref.deref()!.seq)).toEqual([50]);
    stop();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(waitsPending(stopped)).toBe(0);
    expect(getEventListeners(stopped, 'abort')).toHaveLength(0);
  });

  it('adds one listener to the stop signal however many waits it runs, and every wait leaves when it ends', async () => {
    const { push, messages } = feed();
    const batches = messageBatches(messages, 1, 0, stopped);
    for (let seq = 1; seq <= 20; seq++) {
      const next = batches.next();
      push(seq);
      await next;
      expect(getEventListeners(stopped, 'abort')).toHaveLength(1);
    }
    const pending = batches.next();
    expect(waitsPending(stopped)).toBe(1);
    stop();
    await pending;
    expect(waitsPending(stopped)).toBe(0);
  });
});

describe('sleepUnlessStopped', () => {
  it('answers true after its time and false at once when stopped, leaving no wait behind either way', async () => {
    const controller = new AbortController();
    expect(await sleepUnlessStopped(1, controller.signal)).toBe(true);
    expect(await sleepUnlessStopped(1, controller.signal)).toBe(true);
    expect(waitsPending(controller.signal)).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const sleeping = sleepUnlessStopped(60_000, controller.signal);
    expect(waitsPending(controller.signal)).toBe(1);
    controller.abort();
    expect(await sleeping).toBe(false);
    expect(waitsPending(controller.signal)).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(await sleepUnlessStopped(60_000, controller.signal)).toBe(false);
  });
});

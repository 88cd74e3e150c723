import { JsMsg } from 'nats';
import { messageBatches } from './message-batches';

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
  let stop: () => void;
  let stopped: Promise<void>;

  beforeEach(() => {
    stopped = new Promise((resolve) => (stop = resolve));
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
});

import { startStack, TestStack } from '../support/stack';

const EVENTS = 10_000;
/**
 * Writing 10k events through the API takes 40 s to 5 minutes on two shared cores. The poller stops on
 * its signal (every event seen); this is only the safety net for a stack that stops delivering.
 */
const BUDGET_MS = 900_000;

/**
 * The polling rule of the spec, followed literally by a client while events are being written:
 * store next_cursor, send it back, sleep briefly when has_more is false. It must see every event
 * exactly once, with no gap, in log order.
 */
describe('a cursor poller during concurrent writes', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['events'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
  });
  afterAll(() => stack.stop(), BUDGET_MS);

  it(
    `sees each of ${EVENTS} events exactly once`,
    async () => {
      const written: string[] = [];
      let next = 0;
      const writer = async () => {
        while (next < EVENTS) {
          next++;
          const res = await stack.api.post('/apikeys', { name: 'poll', scope: 'read' });
          if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
          written.push(res.body.data.id);
        }
      };
      let writing = true;
      let failed = false;
      const writers = Promise.all(Array.from({ length: 12 }, writer))
        .catch((err) => {
          failed = true;
          throw err;
        })
        .finally(() => (writing = false));

      const seen: string[] = [];
      let cursor: string | undefined;
      let polls = 0;
      // Polls until it has seen every event written (or a writer failed): a signal, not a time.
      while (!failed) {
        const res = await stack.api.get(`/events?type=api_key.created&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        polls++;
        seen.push(...res.body.data.map((e: any) => e.data.key_id));
        expect(typeof res.body.next_cursor).toBe('string');
        cursor = res.body.next_cursor;
        if (!writing && seen.length >= EVENTS + 1) break;
        if (!res.body.has_more) await new Promise((r) => setTimeout(r, 25));
      }
      await writers;

      expect(written).toHaveLength(EVENTS);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toHaveLength(EVENTS + 1); // and the bootstrap key created at start-up
      expect(new Set(seen)).toEqual(new Set([...written, seen[0]]));
      // The same order as a fresh read of the whole log afterwards.
      const after = (await stack.api.listAll('/events?type=api_key.created')).map((e) => e.data.key_id);
      expect(seen).toEqual(after);
      expect(polls).toBeGreaterThan(10);
    },
    BUDGET_MS,
  );
});

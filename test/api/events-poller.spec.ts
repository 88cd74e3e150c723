import { randomUUID } from 'crypto';
import { startStack, TestStack } from '../support/stack';

const EVENTS = 10_000;
/** Events a write makes: contacts created in batches, so the log fills at the pace of its own appends. */
const PER_WRITE = 50;
/**
 * The poller stops on its signal (every event seen); this is only the safety net for a stack that stops
 * delivering.
 */
const BUDGET_MS = 900_000;

/**
 * The polling rule of the spec, followed literally by a client while events are being written:
 * store next_cursor, send it back, sleep briefly when has_more is false. It must see every event
 * exactly once, with no gap, in log order. Twelve writers commit batches at once, so the log is appended
 * to in bursts while the poller reads it; one event a request (as an earlier version of this test wrote
 * them) took minutes of CI time for the same number of events.
 */
describe('a cursor poller during concurrent writes', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'events'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
  });
  afterAll(() => stack.stop(), BUDGET_MS);

  it(
    `sees each of ${EVENTS} events exactly once`,
    async () => {
      const written: string[] = [];
      // As a client following docs/api.md: each batch under an Idempotency-Key, sent again after a 503 (the
      // service did not answer within the gateway's deadline on a loaded machine; the batch may have been
      // written) or a 409 (the first attempt is still running), so it is written once and its answer read.
      const writeOnce = async (body: Record<string, unknown>) => {
        const key = randomUUID();
        for (let attempt = 1; ; attempt++) {
          const res = await stack.api.post('/contacts/batch', body, { headers: { 'Idempotency-Key': key } });
          if ((res.status !== 503 && res.status !== 409) || attempt === 30) return res;
          await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
        }
      };
      let next = 0;
      const writer = async () => {
        while (next < EVENTS / PER_WRITE) {
          next++;
          const items = Array.from({ length: PER_WRITE }, () => ({ email: `poll-${randomUUID()}@poller.example` }));
          const res = await writeOnce({ operation: 'create', all_or_none: true, items });
          if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${res.text}`);
          written.push(...res.body.data.map((item: { data: { id: string } }) => item.data.id));
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
        const res = await stack.api.get(`/events?type=contact.created&limit=200${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        polls++;
        seen.push(...res.body.data.map((e: any) => e.data.contact_id));
        expect(typeof res.body.next_cursor).toBe('string');
        cursor = res.body.next_cursor;
        if (!writing && seen.length >= EVENTS) break;
        if (!res.body.has_more) await new Promise((r) => setTimeout(r, 25));
      }
      await writers;

      expect(written).toHaveLength(EVENTS);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen).toHaveLength(EVENTS);
      expect(new Set(seen)).toEqual(new Set(written));
      // The same order as a fresh read of the whole log afterwards.
      const after = (await stack.api.listAll('/events?type=contact.created')).map((e) => e.data.contact_id);
      expect(seen).toEqual(after);
      expect(polls).toBeGreaterThan(10);
    },
    BUDGET_MS,
  );
});

import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

/** 15 KB of metadata: under the 16 KiB limit, in keys of 1,000 characters. */
function bigMetadata(tag: string): Record<string, string> {
  return Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`k${i}`, `${tag}-${i}-`.padEnd(1000, 'x')]));
}

/**
 * Lists whose items are large must still page: a page ends early (has_more with a cursor) when the next
 * item would make the answer too large, so a client using the defaults reaches the end.
 */
describe('pages of large items', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'events'], env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
  });
  afterAll(() => stack.stop());

  it('GET /events polled with default settings reaches the end of 60 updates of a contact holding 15 KB of metadata', async () => {
    const created = await stack.api.post('/contacts', { email: 'big@example.com', metadata: bigMetadata('v0') });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    for (let i = 1; i <= 60; i++) {
      const res = await stack.api.patch(`/contacts/${id}`, { metadata: bigMetadata(`v${i}`) });
      expect(res.status).toBe(200);
    }

    // A poller following the spec with default settings: keep next_cursor, stop when has_more is false
    // and every update has arrived.
    const updates: any[] = [];
    const pageLengths: number[] = [];
    let cursor: string | undefined;
    await eventually(async () => {
      for (;;) {
        const res = await stack.api.get(`/events?type=contact.*${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        expect(Buffer.byteLength(res.text)).toBeLessThan(1024 * 1024);
        pageLengths.push(res.body.data.length);
        updates.push(...res.body.data.filter((e: any) => e.type === 'contact.updated'));
        cursor = res.body.next_cursor;
        if (!res.body.has_more) break;
      }
      return updates.length >= 60 ? true : undefined;
    }, 120_000);

    expect(updates).toHaveLength(60);
    // In write order, each carrying its own large metadata.
    updates.forEach((e, i) => expect(JSON.stringify(e.data)).toContain(`v${i + 1}-0-`));
    expect(new Set(updates.map((e) => e.id)).size).toBe(60);
    // The byte budget, not the count, ended some pages.
    expect(pageLengths.some((n) => n > 0 && n < 50)).toBe(true);
  });

  it('GET /companies?limit=200 pages through 70 companies holding 15 KB of metadata each', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 70; i++) {
      const res = await stack.api.post('/companies', { name: `Big ${i}`, metadata: bigMetadata(`c${i}`) });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    const seen: string[] = [];
    const pageLengths: number[] = [];
    let cursor: string | undefined;
    do {
      const res = await stack.api.get(`/companies?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      pageLengths.push(res.body.data.length);
      seen.push(...res.body.data.map((c: any) => c.id));
      cursor = res.body.has_more ? res.body.next_cursor : undefined;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(pageLengths.length).toBeGreaterThan(1);
  });
});

import { randomBytes } from 'crypto';
import { ApiResponse } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = () => randomBytes(4).toString('hex');
const ROUNDS = 10;
const IN_FLIGHT = 6;

/**
 * Two concurrent upserts of the same new key do not both create: the one that loses the race updates the
 * record the other created (docs/batch.md). Each round sends several batches upserting one new key at
 * once; exactly one creates it, every other one answers 200 with that record, and one record holds the key.
 */
describe('Concurrent batch upserts of one new key', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
  });
  afterAll(() => stack.stop());

  async function race(
    path: string,
    items: (i: number) => Record<string, unknown>,
    key?: string,
  ): Promise<{ id: string; sent: Array<Record<string, unknown>> }> {
    const sent = Array.from({ length: IN_FLIGHT }, (_, i) => items(i));
    const answers: ApiResponse[] = await Promise.all(sent.map((item) => stack.api.post(path, { operation: 'upsert', items: [item], ...(key ? { key } : {}) })));
    for (const answer of answers) if (answer.status !== 200) throw new Error(`POST ${path} answered ${answer.status}: ${answer.text}`);
    const results = answers.map((a) => a.body.data[0]);
    expect(results.map((r) => r.status).sort((a, b) => a - b)).toEqual([...Array(IN_FLIGHT - 1).fill(200), 201]);
    const ids = new Set(results.map((r) => r.data.id));
    expect(ids.size).toBe(1);
    return { id: [...ids][0], sent };
  }

  async function holders(object: string, filter: Record<string, unknown>): Promise<string[]> {
    const res = await stack.api.post(`/${object}/query`, { filter, fields: ['id'], limit: 200 });
    expect(res.status).toBe(200);
    return res.body.data.map((item: { id: string }) => item.id);
  }

  it('creates a contact once and updates it from every other batch', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `race-${round}-${tag()}@upsert.example`;
      // Each batch gives the key in its own case, as the match ignores case.
      const { id } = await race('/contacts/batch', (i) => ({ email: i % 2 ? email.toUpperCase() : email, title: `Writer ${i}` }));
      expect(await holders('contacts', { email: { $in: [email, email.toUpperCase()] } })).toEqual([id]);
    }
  }, 300_000);

  it('creates a company once and updates it from every other batch', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const domain = `race-${round}-${tag()}.upsert.example`;
      const { id } = await race('/companies/batch', (i) => ({ name: `Writer ${i}`, domain }));
      expect(await holders('companies', { domain })).toEqual([id]);
    }
  }, 300_000);

  it('creates a custom object record once and updates it from every other batch', async () => {
    const slug = `race_${tag()}`;
    const type = await stack.api.post('/objects', {
      name: `Race ${slug}`,
      slug,
      fields: [
        { name: 'code', type: 'string', unique: true },
        { name: 'writer', type: 'string' },
      ],
    });
    expect(type.status).toBe(201);
    for (let round = 0; round < ROUNDS; round++) {
      const code = `R${round}-${tag()}`;
      const { id } = await race(`/objects/${slug}/records/batch`, (i) => ({ values: { code, writer: `Writer ${i}` } }), 'code');
      expect(await holders(`objects/${slug}/records`, { 'values.code': code })).toEqual([id]);
    }
  }, 300_000);
});

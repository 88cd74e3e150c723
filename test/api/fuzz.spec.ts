import fc from 'fast-check';
import { startStack, TestStack } from '../support/stack';

/**
 * Property: whatever a client sends (odd JSON, wrong types, strange paths, queries and headers), the API
 * answers below 500 and every error is in the spec's shape. Seeded, so a failure reproduces; bounded, so
 * it fits in the suite.
 */
const SEED = 20261123;
const RUNS = 150;

const PATHS = [
  '/contacts',
  '/contacts/cont_00000000000000000000000000',
  '/contacts/merge',
  '/companies',
  '/deals',
  '/deals/deal_00000000000000000000000000/stage',
  '/pipelines',
  '/events',
  '/webhooks',
  '/objects',
  '/objects/contacts/records',
  '/activities',
  '/tasks',
  '/capture',
  '/apikeys',
];

const jsonValue = fc.jsonValue({ maxDepth: 6 });
const oddString = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('\u0000', '\ud800', '__proto__', '%00', '../', 'null', '1e309', '-0'));
const body = fc.oneof(
  jsonValue,
  fc.dictionary(fc.oneof(fc.constantFrom('email', 'name', 'stages', 'pipeline_id', 'stage_id', 'value', 'metadata', 'url', 'scope', 'values'), oddString), jsonValue, { maxKeys: 6 }),
  fc.string().map((text) => ({ raw: text })),
);
const query = fc.dictionary(fc.constantFrom('limit', 'cursor', 'search', 'type', 'stage', 'status', 'sort', 'created_after', 'x'), oddString, { maxKeys: 4 });

describe('fuzzing the running stack', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.stop());

  it('never answers 5xx to a client mistake, and always in the error shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE'), fc.constantFrom(...PATHS), query, body, async (method, path, params, payload) => {
        const search = new URLSearchParams(params as Record<string, string>).toString();
        const url = `${path}${search ? `?${search}` : ''}`;
        const hasBody = method !== 'GET' && method !== 'DELETE';
        const isRaw = typeof payload === 'object' && payload !== null && !Array.isArray(payload) && Object.keys(payload).join() === 'raw';
        const rawBody = hasBody ? (isRaw ? String((payload as { raw: unknown }).raw) : JSON.stringify(payload)) : undefined;
        const res = await stack.api.request(method, url, undefined, rawBody === undefined ? {} : { rawBody });
        if (res.status >= 500) throw new Error(`${method} ${url} ${rawBody ?? ''} answered ${res.status}: ${res.text.slice(0, 300)}`);
        if (res.status >= 400) {
          expect(typeof res.body?.error?.code).toBe('string');
          expect(typeof res.body?.error?.message).toBe('string');
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

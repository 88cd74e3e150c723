import { ErrorCode } from '@crm/common';
import fc from 'fast-check';
import { ApiResponse } from '../support/api-client';
import { propertyRuns } from '../support/property-seeds';
import { CursorRoute, cursorRoutes } from '../support/cursor-routes';
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
  fc.dictionary(
    fc.oneof(fc.constantFrom('email', 'name', 'stages', 'pipeline_id', 'stage_id', 'value', 'metadata', 'url', 'scope', 'values'), oddString),
    jsonValue,
    { maxKeys: 6 },
  ),
  fc.string().map((text) => ({ raw: text })),
);
/** Path parameters a client may get wrong: past the router's 1,024 characters, at it, badly percent-encoded, or encoding odd characters. */
const TOO_LONG = ['x'.repeat(1025), `cont_${'9'.repeat(7000)}`, encodeURIComponent('\u{1F600}'.repeat(513))];
const BAD_ENCODING = ['%ZZ', 'cont_%', 'cont_%C3', '%ED%A0%80', '%FF', '%C0%AF', '%E0%A4%A'];
const ODD_PARAMS = ['a'.repeat(1024), '%00', 'cont_%00', '%2F..%2F', '%25', '%20', '%F0%9F%98%80', '..', '%2E%2E', '__proto__'];
const pathParam = fc.oneof(
  fc.constantFrom(...TOO_LONG, ...BAD_ENCODING, ...ODD_PARAMS),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1500 }), fc.nat(), fc.constantFrom('%', '%Z', '%F0%9F', '%00')).map(([text, at, cut]) => {
    const encoded = encodeURIComponent(text);
    const i = at % (encoded.length + 1);
    return `${encoded.slice(0, i)}${cut}${encoded.slice(i)}`;
  }),
);

const ERROR_CODES = new Set<string>(Object.values(ErrorCode));

/** Below 500, and any error in the spec's shape with one of the API's codes. */
function expectClientAnswer(res: ApiResponse, request: string): void {
  if (res.status >= 500) throw new Error(`${request.slice(0, 300)} answered ${res.status}: ${res.text.slice(0, 300)}`);
  if (res.status < 400) return;
  const error = res.body?.error;
  if (typeof error?.message !== 'string' || !ERROR_CODES.has(error?.code))
    throw new Error(`${request.slice(0, 300)} answered ${res.status} outside the error shape: ${res.text.slice(0, 300)}`);
}

const query = fc.dictionary(fc.constantFrom('limit', 'cursor', 'search', 'type', 'stage', 'status', 'sort', 'created_after', 'x'), oddString, { maxKeys: 4 });

describe('fuzzing the running stack', () => {
  let stack: TestStack;
  beforeAll(async () => {
    // A bucket the sweeps below cannot empty: each request should reach its route.
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '100000' } });
  });
  afterAll(() => stack.stop());

  it('never answers 5xx to a client mistake, and always in the error shape', async () => {
    for (const { seed, numRuns } of propertyRuns(SEED, RUNS)) {
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
        { seed, numRuns, endOnFailure: true },
      );
    }
  });

  it('never answers 5xx to a query, however its filter, sort and fields are formed', async () => {
    const object = await stack.api.post('/objects', {
      name: 'Fuzzed',
      slug: 'fuzzed',
      fields: [
        { name: 'title', type: 'string' },
        { name: 'lead', type: 'reference', reference_target: 'contacts' },
        { name: 'deal', type: 'reference', reference_target: 'deals' },
      ],
    });
    expect(object.status).toBe(201);
    const path = fc.oneof(
      fc.constantFrom(
        'email',
        'icp_score',
        'stage',
        'created_at',
        'company.name',
        'owner.email',
        'custom_fields.x',
        'metadata',
        'id',
        'name',
        'type',
        'due_at',
      ),
      fc.constantFrom('contact.email', 'deal.value', 'owner.name', 'values.title', 'values.lead.email', 'values.deal.name', 'values.deal', 'values'),
      oddString,
    );
    const hostile = fc.oneof(
      oddString,
      fc.constantFrom("'; DROP TABLE contacts; --", '%', '_', '\\', '$1', '::text', '2026-02-30T25:61:00Z'),
      fc.double(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
    );
    const operator = fc.oneof(
      fc.constantFrom('$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$contains', '$starts_with', '$ends_with', '$exists'),
      oddString,
    );
    const leaf = fc.oneof(
      fc.tuple(path, hostile).map(([p, v]) => ({ [p]: v })),
      fc.tuple(path, operator, fc.oneof(hostile, fc.array(hostile, { maxLength: 4 }), jsonValue)).map(([p, o, v]) => ({ [p]: { [o]: v } })),
    );
    const filter = fc.letrec<{ expr: unknown }>((tie) => ({
      expr: fc.oneof(
        { depthSize: 'small' },
        leaf,
        jsonValue,
        fc.array(tie('expr'), { maxLength: 3 }).map((items) => ({ $and: items })),
        fc.array(tie('expr'), { maxLength: 3 }).map((items) => ({ $or: items })),
        tie('expr').map((inner) => ({ $not: inner })),
      ),
    })).expr;
    const request = fc.record(
      {
        filter,
        sort: fc.oneof(fc.array(fc.record({ field: path, direction: fc.oneof(fc.constantFrom('asc', 'desc'), oddString) }), { maxLength: 6 }), jsonValue),
        fields: fc.oneof(fc.array(path, { maxLength: 5 }), jsonValue),
        limit: fc.oneof(fc.integer({ min: -5, max: 300 }), jsonValue),
        cursor: fc.oneof(oddString, fc.constant('eyJxIjoieCIsImsiOlsxXSwiaWQiOiJ4In0')),
      },
      { requiredKeys: [] },
    );
    const objects = fc.constantFrom(
      '/contacts/query',
      '/companies/query',
      '/users/query',
      '/activities/query',
      '/tasks/query',
      '/deals/query',
      '/objects/fuzzed/records/query',
    );
    for (const { seed, numRuns } of propertyRuns(SEED, RUNS)) {
      await fc.assert(
        fc.asyncProperty(objects, request, async (url, payload) => {
          const res = await stack.api.request('POST', url, undefined, { rawBody: JSON.stringify(payload) });
          if (res.status >= 500) throw new Error(`POST ${url} ${JSON.stringify(payload).slice(0, 500)} answered ${res.status}: ${res.text.slice(0, 300)}`);
          if (res.status >= 400) expect(typeof res.body?.error?.code).toBe('string');
          else expect(Array.isArray(res.body?.data)).toBe(true);
        }),
        { seed, numRuns, endOnFailure: true },
      );
    }
  });

  describe('path parameters', () => {
    /** Every documented route with a path parameter, each method of it, read from the gateway's own document. */
    let routes: Array<{ method: string; template: string }>;
    beforeAll(async () => {
      const document = (await (await fetch(`${stack.gateway.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      routes = Object.entries(document.paths)
        .filter(([template]) => template.includes('{'))
        .flatMap(([template, operations]) =>
          ['get', 'post', 'put', 'patch', 'delete'].filter((m) => operations[m]).map((m) => ({ method: m.toUpperCase(), template })),
        );
      expect(routes.length).toBeGreaterThan(40);
    });

    const request = (method: string, url: string) => stack.api.request(method, url, method === 'GET' || method === 'DELETE' ? undefined : {});

    /** The route with its n-th parameter `param(n)`. */
    async function send(method: string, template: string, param: (n: number) => string): Promise<void> {
      let n = 0;
      const url = template.replace(/\{\w+\}/g, () => param(n++));
      expectClientAnswer(await request(method, url), `${method} ${url}`);
    }

    it('answers every route below 500 and in the error shape when a parameter is too long or badly encoded', async () => {
      for (const { method, template } of routes) {
        for (const bad of [...TOO_LONG, ...BAD_ENCODING, ...ODD_PARAMS]) {
          // In each position, the others well formed.
          const count = template.split('{').length - 1;
          for (let at = 0; at < count; at++) await send(method, template, (n) => (n === at ? bad : 'cont_00000000000000000000000000'));
        }
      }
      // Some 1,700 requests: room for a machine many times slower than a quiet one.
    }, 600_000);

    it('answers a too-long parameter like an unknown id, and a badly encoded one as a bad request', async () => {
      for (const { method, template } of routes) {
        const url = template.replace(/\{\w+\}/g, 'x'.repeat(2000));
        const long = await request(method, url);
        expect({ url: `${method} ${template}`, status: long.status, code: long.body?.error?.code }).toEqual({
          url: `${method} ${template}`,
          status: 404,
          code: 'not_found',
        });
        const encoded = await request(method, template.replace(/\{\w+\}/g, 'cont_%ZZ'));
        expect({ url: `${method} ${template}`, status: encoded.status, code: encoded.body?.error?.code }).toEqual({
          url: `${method} ${template}`,
          status: 400,
          code: 'invalid_request',
        });
      }
    }, 300_000);

    it('never answers 5xx to random parameters, encoded or not', async () => {
      for (const { seed, numRuns } of propertyRuns(SEED, RUNS)) {
        await fc.assert(
          fc.asyncProperty(fc.nat(), fc.array(pathParam, { minLength: 3, maxLength: 3 }), async (pick, params) => {
            const { method, template } = routes[pick % routes.length];
            await send(method, template, (n) => params[n]);
          }),
          { seed, numRuns, endOnFailure: true },
        );
      }
    }, 300_000);
  });
});

describe('fuzzing cursors on every route that takes one', () => {
  let stack: TestStack;
  let routes: CursorRoute[];
  const genuine: string[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    routes = await cursorRoutes(stack.api);
    for (let i = 0; i < 3; i++) await stack.api.post('/contacts', { email: `fuzzed.${i}@example.com`, first_name: `F${i}` });
    const pages = [
      stack.api.get('/contacts?limit=1'),
      stack.api.get('/contacts?limit=1&sort=-created_at'),
      stack.api.post('/contacts/query', { sort: [{ field: 'created_at' }], limit: 1 }),
      stack.api.get('/events?limit=1'),
      stack.api.get('/changes?limit=1'),
    ];
    for (const page of await Promise.all(pages)) genuine.push(page.body.next_cursor);
  });
  afterAll(() => stack?.stop());

  it('never answers 5xx to a forged, tampered or foreign cursor, and always in the error shape', async () => {
    const base64url = (value: unknown) => Buffer.from(JSON.stringify(value) ?? 'null', 'utf8').toString('base64url');
    const hostileKey = fc.oneof(
      jsonValue,
      oddString,
      fc.constantFrom('not-a-date', '2026-02-30 00:00:00+00', 'cont_\u0000', '99999999999999999999', 'NaN', -1, 2 ** 62, 1.5),
    );
    const signature = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), minLength: 43, maxLength: 43 });
    const given = fc.nat().map((i) => genuine[i % genuine.length]);
    const body = (cursor: string) => JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8')) as { l: string; k: unknown };
    const cursor = fc.oneof(
      oddString,
      jsonValue.map(base64url),
      fc
        .tuple(fc.constantFrom('contacts', 'contacts?sort=created_at', 'contacts/query', 'events', 'changes', 'apikeys'), hostileKey)
        .map(([l, k]) => base64url({ l, k })),
      fc.tuple(given, hostileKey, signature).map(([c, k, tag]) => `${base64url({ ...body(c), k })}.${tag}`),
      fc
        .tuple(given, hostileKey)
        .map(([c, k]) => `${base64url({ ...body(c), k: typeof body(c).k === 'object' ? { ...(body(c).k as object), k: [k] } : k })}.${c.split('.')[1]}`),
      fc.tuple(given, fc.nat(), fc.constantFrom(...'Aa0_-.')).map(([c, at, char]) => `${c.slice(0, at % c.length)}${char}${c.slice((at % c.length) + 1)}`),
      fc.tuple(given, fc.nat()).map(([c, at]) => c.slice(0, at % c.length)),
      fc.tuple(given, oddString).map(([c, tail]) => `${c}${tail}`),
      given,
    );
    const sort = fc.constantFrom(undefined, '-id', 'created_at', 'id,-id');
    for (const { seed, numRuns } of propertyRuns(SEED, RUNS * 2)) {
      await fc.assert(
        fc.asyncProperty(
          fc.nat().map((i) => routes[i % routes.length]),
          cursor,
          sort,
          async (route, raw, order) => {
            const res = await route.send(stack.api, raw, route.sortable ? order : undefined);
            if (res.status >= 500)
              throw new Error(`${route.method} ${route.path} cursor=${JSON.stringify(raw)} sort=${order} answered ${res.status}: ${res.text.slice(0, 300)}`);
            if (res.status >= 400) {
              expect(typeof res.body?.error?.code).toBe('string');
              expect(typeof res.body?.error?.message).toBe('string');
              for (const detail of res.body.error.details ?? [])
                expect(detail).toEqual({ field: expect.any(String), code: expect.any(String), message: expect.any(String) });
            } else {
              expect(Array.isArray(res.body?.data)).toBe(true);
            }
          },
        ),
        { seed, numRuns, endOnFailure: true },
      );
    }
  });
});

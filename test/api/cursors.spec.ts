import { createHmac } from 'crypto';
import { ApiResponse } from '../support/api-client';
import { CursorRoute, cursorRoutes } from '../support/cursor-routes';
import { startStack, TestStack } from '../support/stack';

/**
 * Cursors are signed by the deployment and checked again for their values' types: whatever a client
 * makes of one, a cursor the server did not issue is 400 invalid_cursor on every route, never a 500, and
 * the cursors it did issue keep paging, across replicas, restarts and a change of secret.
 */
const SECRET = 'the cursor secret of this test deployment (32+ characters)';
const OTHER_SECRET = 'another deployment entirely with its own cursor secret';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const sign = (secret: string, body: string) => `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
/** The JSON a cursor carries, as any client can read it. */
const payloadOf = (cursor: string) => JSON.parse(Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8'));

function expectInvalidCursor(res: ApiResponse, what: string): void {
  expect({ what, status: res.status, error: res.body?.error }).toEqual({
    what,
    status: 400,
    error: { code: 'invalid_request', message: expect.any(String), details: [expect.objectContaining({ field: 'cursor', code: 'invalid_cursor' })] },
  });
}

describe('cursors', () => {
  let stack: TestStack;
  let routes: CursorRoute[];
  const contacts: string[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { CURSOR_SECRET: SECRET, WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' } });
    routes = await cursorRoutes(stack.api);
    for (let i = 0; i < 5; i++) contacts.push((await stack.api.post('/contacts', { email: `paged.${i}@example.com`, first_name: `P${i}` })).body.data.id);
  });
  afterAll(() => stack?.stop());

  it('finds the routes that take a cursor in the OpenAPI document', () => {
    const names = routes.map((r) => `${r.method} ${r.template}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'GET /contacts',
        'POST /contacts/query',
        'GET /events',
        'GET /changes',
        'GET /apikeys',
        'GET /webhooks/{id}/deliveries',
        'GET /deals/{id}/history',
      ]),
    );
    expect(names.length).toBeGreaterThanOrEqual(40);
  });

  it('answers a forged sort key that is not a date with 400 invalid_cursor, not 500', async () => {
    const contact = contacts[0];
    // The cursor as a client would forge it from one it was given: the list, the sort, a value that is not a date.
    const listForged = b64({ l: 'contacts?sort=created_at', k: JSON.stringify({ k: ['not-a-date'], id: contact }) });
    expectInvalidCursor(await stack.api.get(`/contacts?sort=created_at&cursor=${listForged}`), 'GET /contacts?sort=created_at');

    const genuine = (await stack.api.post('/contacts/query', { sort: [{ field: 'created_at' }], limit: 1 })).body.next_cursor as string;
    const given = payloadOf(genuine);
    const digest = given.q ?? given.k?.q;
    expect(typeof digest).toBe('string');
    const queryForged = b64({ q: digest, k: ['not-a-date'], id: contact });
    expectInvalidCursor(await stack.api.post('/contacts/query', { sort: [{ field: 'created_at' }], limit: 1, cursor: queryForged }), 'POST /contacts/query');
  });

  it('refuses a cursor signed with this deployment’s own secret whose value is not its field’s type', async () => {
    // Only the deployment knows its secret; this checks the second line of defence behind the signature.
    const listed = (await stack.api.get('/contacts?sort=created_at&limit=1')).body.next_cursor as string;
    const list = payloadOf(listed);
    const notADate = sign(SECRET, b64({ ...list, k: { ...list.k, k: ['not-a-date'] } }));
    expectInvalidCursor(await stack.api.get(`/contacts?sort=created_at&cursor=${notADate}`), 'sorted list');
    const nul = sign(SECRET, b64({ ...list, k: { ...list.k, id: 'cont_\u0000' } }));
    expectInvalidCursor(await stack.api.get(`/contacts?sort=created_at&cursor=${nul}`), 'sorted list, NUL id');

    const queried = (await stack.api.post('/contacts/query', { sort: [{ field: 'created_at' }], limit: 1 })).body.next_cursor as string;
    const query = payloadOf(queried);
    const badQuery = sign(SECRET, b64({ ...query, k: { ...query.k, k: ['2026-02-30 10:00:00+00'] } }));
    expectInvalidCursor(await stack.api.post('/contacts/query', { sort: [{ field: 'created_at' }], limit: 1, cursor: badQuery }), 'query');

    const events = (await stack.api.get('/events?limit=1')).body.next_cursor as string;
    const event = payloadOf(events);
    const negative = sign(SECRET, b64({ ...event, k: -1 }));
    expectInvalidCursor(await stack.api.get(`/events?cursor=${negative}`), 'events');
  });

  it('refuses forged, tampered, foreign and older-build cursors on every route that takes one', async () => {
    const fromContacts = (await stack.api.get('/contacts?limit=1')).body.next_cursor as string;
    const fromSortedContacts = (await stack.api.get('/contacts?limit=1&sort=email')).body.next_cursor as string;
    const [body, tag] = fromContacts.split('.');
    const edited = b64({ ...payloadOf(fromContacts), k: contacts[3] });
    const forgeries: Record<string, string> = {
      'not a cursor': 'not-a-cursor',
      'an older build’s unsigned cursor': body,
      'an edited body under the genuine signature': `${edited}.${tag}`,
      'a genuine body under a damaged signature': `${body}.${tag[0] === 'A' ? 'B' : 'A'}${tag.slice(1)}`,
      'a cursor signed by another deployment': sign(OTHER_SECRET, body),
      'a forged sort key that is not a date': b64({ l: 'contacts?sort=created_at', k: JSON.stringify({ k: ['not-a-date'], id: contacts[0] }) }),
    };
    for (const route of routes) {
      const foreign = route.template === '/contacts' ? fromSortedContacts : fromContacts;
      for (const [what, cursor] of Object.entries({ ...forgeries, 'a genuine cursor of another list': foreign })) {
        expectInvalidCursor(await route.send(stack.api, cursor), `${route.method} ${route.template}: ${what}`);
        if (route.sortable) expectInvalidCursor(await route.send(stack.api, cursor, '-id'), `${route.method} ${route.template}?sort: ${what}`);
      }
    }
  });

  /** Every id of a list, following next_cursor `limit` at a time. */
  async function walk(first: (cursor?: string) => Promise<ApiResponse>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const res = await first(cursor);
      expect(res.status).toBe(200);
      ids.push(...res.body.data.map((item: { id: string }) => item.id));
      if (!res.body.has_more) return ids;
      cursor = res.body.next_cursor;
    }
    throw new Error('the list did not end');
  }

  it('pages with the cursors it issued, in every order, as one large page would', async () => {
    const contactsQuery = (limit: number, c?: string) => stack.api.get(`/contacts?limit=${limit}${c ? `&cursor=${c}` : ''}`);
    expect(await walk((c) => contactsQuery(2, c))).toEqual(await walk(() => contactsQuery(200)));
    for (const sort of ['-created_at', 'email', '-first_name,created_at']) {
      const sorted = (limit: number, c?: string) => stack.api.get(`/contacts?limit=${limit}&sort=${sort}${c ? `&cursor=${c}` : ''}`);
      expect(await walk((c) => sorted(2, c))).toEqual(await walk(() => sorted(200)));
    }
    const query = (limit: number, c?: string) =>
      stack.api.post('/contacts/query', { sort: [{ field: 'created_at', direction: 'desc' }, { field: 'email' }], limit, ...(c ? { cursor: c } : {}) });
    expect(await walk((c) => query(2, c))).toEqual(await walk(() => query(200)));
    // The logs only grow: what small pages walked is where one large page read later starts.
    for (const log of ['/events', '/changes']) {
      const small = await walk((c) => stack.api.get(`${log}?limit=3${c ? `&cursor=${c}` : ''}`));
      expect(small.length).toBeGreaterThan(3);
      expect((await walk(() => stack.api.get(`${log}?limit=200`))).slice(0, small.length)).toEqual(small);
    }
  });

  it('accepts its cursors after a restart and while its secret is replaced, refuses them once the secret is gone, and on any replica', async () => {
    const page = (cursor: string) => stack.api.get(`/contacts?limit=2&sort=email&cursor=${cursor}`);
    const issued = (await stack.api.get('/contacts?limit=2&sort=email')).body.next_cursor as string;
    const next = async (cursor: string) => {
      const res = await page(cursor);
      expect(res.status).toBe(200);
      return res.body.data.map((contact: { id: string }) => contact.id);
    };
    const expected = await next(issued);
    expect(expected).toHaveLength(2);

    await stack.stopService('contacts');
    await stack.startService('contacts', { CURSOR_SECRET: `${OTHER_SECRET},${SECRET}` });
    expect(await next(issued)).toEqual(expected);

    await stack.stopService('contacts');
    await stack.startService('contacts', { CURSOR_SECRET: OTHER_SECRET });
    expectInvalidCursor(await page(issued), 'a cursor signed with a secret no longer configured');

    // Two replicas share the requests; each answers the cursors the other issued.
    await stack.stopService('contacts');
    await stack.startService('contacts');
    await stack.startService('contacts');
    for (let i = 0; i < 8; i++) expect(await next(issued)).toEqual(expected);
  }, 300_000);
});

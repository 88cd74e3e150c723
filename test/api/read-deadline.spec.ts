import { ApiClient } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { tableLocks } from '../support/table-locks';

/**
 * Search, duplicates, the pipeline report and the event log run under the caller's deadline as a query
 * does (docs/query.md, "The budget"): each statement's statement_timeout is the time left, and nothing of
 * the request is left running once the caller has its answer. As in query-deadline.spec.ts, the
 * statements are held up by a lock on the table they read, so nothing depends on the machine's speed:
 * the services would allow a minute, the gateway waits 3 s.
 *
 * A service gives up 500 ms before its caller does, so the client hears why (400 query_too_expensive,
 * with a hint); on a loaded machine the gateway's own 503 may come first. Either way nothing runs on.
 */
describe('every read path ends when its caller stops waiting', () => {
  let stack: TestStack;
  let api: ApiClient;
  let pipelineId: string;
  let contactId: string;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'], env: { QUERY_TIMEOUT_MS: '60000', RPC_TIMEOUT_MS: '60000' } });
    api = new ApiClient((await stack.startGateway({ RPC_TIMEOUT_MS: '3000' })).url, stack.apiKey);
    const pipeline = (await api.post('/pipelines', { name: 'Held', stages: [{ name: 'New', type: 'open' }] })).body.data;
    pipelineId = pipeline.id;
    contactId = (await api.post('/contacts', { email: 'held@example.com', first_name: 'Held', last_name: 'Reader' })).body.data.id;
    // Each path once before it is timed (a first call loads what it needs).
    expect((await api.get('/search?q=held')).status).toBe(200);
    expect((await api.get(`/contacts/${contactId}/duplicates`)).status).toBe(200);
    expect((await api.get(`/pipelines/${pipelineId}/report`)).status).toBe(200);
    expect((await api.get('/events?limit=1')).status).toBe(200);
    expect((await api.post('/events/query', { filter: { type: 'contact.created' }, limit: 1 })).status).toBe(200);
  });
  afterAll(() => stack?.stop());
  const locks = () => tableLocks(stack.databaseUrl);

  type Answer = { status: number; body: { error?: { code: string; message: string } } };
  const GAVE_UP = ['400 query_too_expensive', '503 service_unavailable'];

  /** The request's answer while `table` is locked, checked while the lock is still held: a statement that ran on would still be waiting for it. */
  async function heldUp(table: string, request: () => Promise<Answer>): Promise<Answer> {
    const { answer, seenWaiting } = await locks().answeredWhileLocked(table, request);
    expect(seenWaiting).toBe(true);
    expect(GAVE_UP).toContain(`${answer.status} ${answer.body.error?.code}`);
    return answer;
  }

  /** A 400 names what to change; a 503 is the gateway's own. */
  const hints = (answer: Answer, words: RegExp) => {
    if (answer.status === 400) expect(answer.body.error?.message).toMatch(words);
  };

  it('search: both services stop, with a hint to search for a longer word', async () => {
    hints(await heldUp('contacts.contacts', () => api.get('/search?q=held')), /longer or rarer word/);
    hints(await heldUp('deals.deals', () => api.get('/search?q=held&objects=deals')), /longer or rarer word/);
  });

  it('duplicates: a stored contact and a draft', async () => {
    hints(await heldUp('contacts.contacts', () => api.get(`/contacts/${contactId}/duplicates`)), /Compare fewer fields/);
    hints(await heldUp('contacts.contacts', () => api.post('/contacts/duplicates', { email: 'held@example.com', first_name: 'Held' })), /Compare fewer fields/);
  });

  it('the pipeline report, with a hint to ask for a shorter window', async () => {
    hints(await heldUp('deals.deals', () => api.get(`/pipelines/${pipelineId}/report`)), /shorter window/);
  });

  it('GET /events and POST /events/query', async () => {
    hints(await heldUp('events.events', () => api.get('/events?limit=5')), /Narrow it/);
    hints(await heldUp('events.events', () => api.post('/events/query', { filter: { 'data.name': { $contains: 'held' } } })), /Narrow it/);
    // Nothing of them was left holding a connection: the log answers as before.
    expect((await api.get('/events?limit=1')).status).toBe(200);
  });
});

import { randomBytes } from 'crypto';
import { connect, NatsConnection } from 'nats';
import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { rowsNaming, streamMessagesNaming } from '../support/erasure-scan';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

const tag = randomBytes(4).toString('hex');
const EMAIL = `ada.${tag}@erase.example`;
const PHONE = `+44 20 7946 ${String(1000 + (parseInt(tag, 16) % 9000))}`;
const SURNAME = `Zwiebelmeyer${tag}`;
const NEEDLES = [EMAIL, PHONE, SURNAME];

/**
 * Erasure of a person (docs/privacy.md): after one request the person's email, phone and surname are in
 * no table of any schema, in no message of the stream and in nothing a webhook replay sends, while every
 * other record, event and log position stays.
 */
describe('Erasing a person everywhere', () => {
  let stack: TestStack;
  let receiver: Receiver;
  let db: Client;
  let nc: NatsConnection;
  const previous = process.env.CRM_READ_WRITE_ALSO_GRANTS;

  beforeAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:delete,privacy:read';
    stack = await startStack({
      services: ['contacts', 'deals', 'events', 'webhooks'],
      env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' },
    });
    receiver = await Receiver.start();
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    nc = await connect({ servers: stack.env.NATS_URL });
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = previous;
    await nc?.close();
    await db?.end();
    await receiver?.close();
    await stack?.stop();
  });

  async function ok<T = any>(method: 'post' | 'patch' | 'get', path: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
    const res = method === 'get' ? await stack.api.get(path) : await stack.api[method](path, body, headers ? { headers } : {});
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
    return res.body.data as T;
  }

  it('erases the contact, its history, log events, stream messages, webhook copies, search words, import rows and stored answers', async () => {
    const hook = await ok('post', '/webhooks', { name: 'erasure receiver', url: receiver.url });

    // The person, made by an idempotent request, changed, named by activities, on a deal, imported again.
    const createBody = { email: EMAIL, first_name: 'Ada', last_name: SURNAME, phone: PHONE };
    const contact = await ok('post', '/contacts', createBody, { 'Idempotency-Key': `erase-${tag}` });
    await ok('patch', `/contacts/${contact.id}`, { title: `Head of ${SURNAME} family office` });
    const other = await ok('post', '/contacts', { email: `grace.${tag}@keep.example`, first_name: 'Grace', last_name: `Hopper${tag}` });
    const onlyHers = await ok('post', '/activities', {
      type: 'note',
      contact_id: contact.id,
      subject: `Call with Ada ${SURNAME}`,
      body: `reach her at ${EMAIL}`,
    });
    const pipeline = await ok('post', '/pipelines', {
      name: `P ${tag}`,
      stages: [
        { name: 'New', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    const deal = await ok('post', '/deals', {
      name: `Deal ${tag}`,
      value: 120000,
      currency: 'EUR',
      pipeline_id: pipeline.id,
      stage_id: pipeline.stages[0].id,
      contact_id: contact.id,
    });
    const shared = await ok('post', '/activities', {
      type: 'note',
      contact_id: other.id,
      subject: `Grace mentioned ${SURNAME}`,
      body: `forward to ${EMAIL} or ${PHONE}`,
    });
    const csv = ['email,first_name,last_name', `${EMAIL},Ada,${SURNAME}`].join('\r\n');
    const upload = await fetch(`${stack.gateway.url}/imports?object=contacts`, {
      method: 'POST',
      headers: { 'X-Api-Key': stack.apiKey, 'Content-Type': 'text/csv' },
      body: csv,
    });
    expect(upload.status).toBe(202);
    const imported = ((await upload.json()) as { data: { id: string } }).data.id;
    await eventually(async () => ((await ok('get', `/imports/${imported}`)).status === 'completed' ? true : undefined));
    expect((await stack.api.get(`/search?q=${SURNAME}`)).body.data.length).toBeGreaterThan(0);
    await receiver.waitFor(1, 'contact.created');
    const before = await rowsNaming(db, NEEDLES);
    expect(before).not.toEqual([]);
    const importRows = before.filter((r) => r.startsWith('contacts.import_rows:')).length;

    // read-write alone does not grant it: only a key holding privacy:delete by name.
    const wide = (await stack.api.post('/apikeys', { name: 'everything else', scopes: ['*:*'] })).body.data;
    const refused = await fetch(`${stack.gateway.url}/privacy/erasures`, {
      method: 'POST',
      headers: { 'X-Api-Key': wide.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ subject: { object: 'contacts', id: contact.id } }),
    });
    expect(refused.status).toBe(403);

    const logBefore = (await stack.api.listAll<{ id: string; type: string }>('/events')).map((e) => e.id);
    const first = await stack.api.post('/privacy/erasures', { subject: { object: 'contacts', id: contact.id }, reason: 'Article 17 request' });
    expect(first.status).toBe(202);
    const again = await stack.api.post('/privacy/erasures', { subject: { email: EMAIL.toUpperCase() } });
    expect(again.status).toBe(202);
    expect(again.body.data.id).toBe(first.body.data.id);

    const done = await eventually(
      async () => {
        const e = await ok('get', `/privacy/erasures/${first.body.data.id}`);
        if (e.status === 'failed') throw new Error(e.error);
        return e.status === 'completed' ? e : undefined;
      },
      120_000,
      100,
      () => true,
    );
    const count = (store: string) => done.receipt.stores.find((s: { store: string }) => s.store === store);
    expect(done.receipt).toMatchObject({ subject_id: contact.id, email_hmac: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.stringify(done)).not.toMatch(new RegExp(NEEDLES.map((n) => n.replace(/[+.]/g, '\\$&')).join('|'), 'i'));
    expect(count('contacts.contacts')).toMatchObject({ deleted: 1 });
    expect(count('contacts.activities')).toMatchObject({ deleted: 1, redacted: 1 });
    expect(count('deals.deals')).toMatchObject({ deleted: 1, redacted: 1 });
    expect(count('contacts.import_rows')).toMatchObject({ redacted: importRows });
    expect(count('events.log')!.redacted).toBeGreaterThanOrEqual(3);
    expect(done.receipt.event_log_ranges.length).toBeGreaterThan(0);

    await receiver.waitFor(1, 'privacy.erased');
    expect(receiver.received('privacy.erased')[0].json.data).toEqual({ contact_id: contact.id, erasure_id: done.id });

    // What stays: the deal with its money, the other activity with its own text, every log event.
    expect(await ok('get', `/deals/${deal.id}`)).toMatchObject({ value: 120000, contact_id: null });
    expect((await stack.api.get(`/activities/${onlyHers.id}`)).status).toBe(404);
    expect((await ok('get', `/activities/${shared.id}`)).subject).toBe('Grace mentioned [redacted]');
    const logAfter = (await stack.api.listAll<{ id: string }>('/events')).map((e) => e.id);
    expect(logAfter.slice(0, logBefore.length)).toEqual(logBefore);
    expect((await stack.api.get(`/search?q=${SURNAME}`)).body.data).toEqual([]);

    // A replay of the contact's first event sends the redacted form.
    const created = (await stack.api.listAll<{ id: string; type: string; data: any }>('/events')).find(
      (e) => e.type === 'contact.created' && e.data.contact_id === contact.id,
    )!;
    expect(created.data).toMatchObject({ contact_id: contact.id, email: null, redacted: true });
    const sent = receiver.requests.length;
    expect((await stack.api.post(`/webhooks/${hook.id}/replay`, { event_id: created.id })).status).toBeLessThan(300);
    await receiver.waitFor(sent + 1);
    for (const r of receiver.requests.slice(sent)) expect(NEEDLES.some((n) => r.body.toLowerCase().includes(n.toLowerCase()))).toBe(false);

    // The stored answer of the idempotent create is replaced: a retry is told it was erased, and is not applied again.
    expect(count('gateway.idempotency_keys')).toEqual({ store: 'gateway.idempotency_keys', deleted: 0, redacted: 1 });
    const retried = await stack.api.post('/contacts', createBody, { headers: { 'Idempotency-Key': `erase-${tag}` } });
    expect(retried.status).toBe(409);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body.error.code).toBe('conflict');
    expect(NEEDLES.some((n) => retried.text.toLowerCase().includes(n.toLowerCase()))).toBe(false);
    expect((await stack.api.get(`/contacts/${contact.id}`)).status).toBe(404);

    expect(await rowsNaming(db, NEEDLES)).toEqual([]);
    expect(await streamMessagesNaming(nc, stack.namespace, NEEDLES)).toEqual([]);
  });
});

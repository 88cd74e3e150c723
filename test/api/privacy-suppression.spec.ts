import { randomBytes } from 'crypto';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';

const tag = randomBytes(4).toString('hex');
const EMAIL = `erased.${tag}@suppress.example`;

/**
 * Suppression (docs/privacy.md, "Suppression"): an erasure with `suppress` keeps the keyed hash of the
 * email, and every write that would store the email again answers `409 conflict` with a `suppressed`
 * detail (imports skip the row with a warning) until the suppression is lifted by its hash.
 */
describe('Suppressing an erased email', () => {
  let stack: TestStack;
  const previous = process.env.CRM_READ_WRITE_ALSO_GRANTS;

  beforeAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = 'privacy:delete,privacy:read';
    stack = await startStack({ services: ['contacts', 'deals', 'events', 'webhooks'] });
  });
  afterAll(async () => {
    process.env.CRM_READ_WRITE_ALSO_GRANTS = previous;
    await stack?.stop();
  });

  const suppressed = (error: any) => {
    expect(error).toMatchObject({ code: 'conflict', details: [{ field: 'email', code: 'suppressed' }] });
    // The refusal does not repeat the email it refuses.
    expect(JSON.stringify(error).toLowerCase()).not.toContain(EMAIL.toLowerCase());
  };

  async function importCsv(csv: string): Promise<any> {
    const upload = await fetch(`${stack.gateway.url}/imports?object=contacts`, {
      method: 'POST',
      headers: { 'X-Api-Key': stack.apiKey, 'Content-Type': 'text/csv' },
      body: csv,
    });
    expect(upload.status).toBe(202);
    const { id } = ((await upload.json()) as { data: { id: string } }).data;
    return eventually(async () => {
      const job = (await stack.api.get(`/imports/${id}`)).body.data;
      return job.status === 'completed' ? job : undefined;
    });
  }

  const completed = (id: string) =>
    eventually(
      async () => {
        const e = (await stack.api.get(`/privacy/erasures/${id}`)).body.data;
        if (e.status === 'failed') throw new Error(e.error);
        return e.status === 'completed' ? e : undefined;
      },
      60_000,
      50,
      () => true,
    );

  it('refuses creates, upserts, batches, captures, email changes and import rows of the email until it is lifted', async () => {
    const contact = (await stack.api.post('/contacts', { email: EMAIL, first_name: 'Erin', last_name: `Erased${tag}` })).body.data;
    const other = (await stack.api.post('/contacts', { email: `kept.${tag}@suppress.example`, first_name: 'Kim' })).body.data;
    // Without `suppress`, the email may come back.
    const unsuppressed = await stack.api.post('/privacy/erasures', { subject: { email: `nobody.${tag}@suppress.example` } });
    expect(unsuppressed.status).toBe(202);

    const asked = await stack.api.post('/privacy/erasures', { subject: { object: 'contacts', id: contact.id }, suppress: true });
    expect(asked.status).toBe(202);
    expect(asked.body.data.suppress).toBe(true);
    const done = await completed(asked.body.data.id);
    await completed(unsuppressed.body.data.id);
    const hash: string = done.receipt.email_hmac;

    // POST /contacts, in another case and with spaces around it.
    const created = await stack.api.post('/contacts', { email: `  ${EMAIL.toUpperCase()} `, first_name: 'Erin' });
    expect(created.status).toBe(409);
    suppressed(created.body.error);

    // Batch create and upsert: the item is refused, its neighbours are written.
    for (const operation of ['create', 'upsert']) {
      const batch = await stack.api.post('/contacts/batch', {
        operation,
        items: [{ email: EMAIL, first_name: 'Erin' }, { email: `${operation}.${tag}@suppress.example` }],
      });
      expect(batch.status).toBe(200);
      expect(batch.body.data[0].status).toBe(409);
      suppressed(batch.body.data[0].error);
      expect(batch.body.data[1].status).toBe(201);
    }

    // Capture, and another contact taking the email.
    const captured = await stack.api.post('/capture', { email: EMAIL, first_name: 'Erin' });
    expect(captured.status).toBe(409);
    suppressed(captured.body.error);
    const moved = await stack.api.patch(`/contacts/${other.id}`, { email: EMAIL });
    expect(moved.status).toBe(409);
    suppressed(moved.body.error);

    // An import skips the row with a warning and applies the rest.
    const job = await importCsv(['email,first_name', `${EMAIL},Erin`, `imported.${tag}@suppress.example,Ivy`].join('\r\n'));
    expect(job.counts).toMatchObject({ total: 2, created: 1, failed: 0, skipped: 1 });
    expect(job.errors).toEqual([]);
    expect(job.warnings).toEqual([expect.objectContaining({ line: 2, field: 'email', code: 'suppressed' })]);
    expect(await stack.api.listAll(`/contacts?search=${encodeURIComponent(EMAIL)}`)).toEqual([]);

    // Lifting it needs privacy:delete by name, and names the hash the erasure's receipt gives.
    const wide = stack.api.withKey((await stack.api.post('/apikeys', { name: 'no privacy', scopes: ['*:*'] })).body.data.key);
    expect((await wide.delete(`/privacy/suppressions/${hash}`)).status).toBe(403);
    expect((await stack.api.delete(`/privacy/suppressions/${'0'.repeat(64)}`)).status).toBe(404);
    expect((await stack.api.delete(`/privacy/suppressions/${hash}`)).status).toBe(204);
    expect((await stack.api.delete(`/privacy/suppressions/${hash}`)).status).toBe(404);
    expect((await stack.api.post('/contacts', { email: EMAIL, first_name: 'Erin' })).status).toBe(201);

    // An erasure without `suppress` suppresses nothing.
    const again = await stack.api.post('/contacts', { email: `nobody.${tag}@suppress.example` });
    expect(again.status).toBe(201);
  });
});

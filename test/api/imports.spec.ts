import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Ops } from '@crm/contracts';
import { askService, eventually, runBuilt, startStack, TestStack } from '../support';

/** Bulk imports: POST /imports streams CSV or NDJSON into a job that the contacts service applies in batches. */
describe('Imports', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts', 'deals', 'events'] });
  });
  afterAll(() => stack.stop());

  const json = async (res: Response): Promise<any> => res.json();
  const upload = (object: string, contentType: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${stack.gateway.url}/imports?object=${object}`, {
      method: 'POST',
      headers: { 'X-Api-Key': stack.apiKey, 'Content-Type': contentType, ...headers },
      body,
    });

  const finished = (id: string, timeoutMs = 120_000) =>
    eventually(
      async () => {
        const job = (await stack.api.get(`/imports/${id}`)).body.data;
        return ['completed', 'failed'].includes(job.status) ? job : undefined;
      },
      timeoutMs,
      100,
    );

  it('imports contacts from CSV: creates new ones, updates those matched by email, reports bad rows by line', async () => {
    await stack.api.post('/objects/contacts/fields', { name: 'tier', type: 'number' });
    const existing = (await stack.api.post('/contacts', { email: 'known@import.test', first_name: 'Old' })).body.data;
    const csv = [
      'email,first_name,last_name,stage,icp_score,custom_fields.tier,metadata.origin',
      'ada@import.test,Ada,Lovelace,lead,80,1,fair',
      'KNOWN@import.test,New,,customer,,,',
      'not-an-email,Bad,,,,,',
      'grace@import.test,Grace,Hopper,alien,,,',
      'short@import.test,Short',
      '"quoted, name@import.test",x,,,,,',
      'linus@import.test,Linus,,,,two,',
    ].join('\r\n');
    const res = await upload('contacts', 'text/csv', csv);
    expect(res.status).toBe(202);
    const accepted = (await json(res)).data;
    expect(accepted).toMatchObject({ id: expect.stringMatching(/^imp_[0-9a-z]{26}$/), object: 'contacts', format: 'csv', counts: { total: 7 } });
    expect(['queued', 'running', 'completed']).toContain(accepted.status);

    const job = await finished(accepted.id);
    expect(job).toMatchObject({ status: 'completed', counts: { total: 7, processed: 7, created: 1, updated: 1, failed: 5 }, failure_reason: null });
    expect(job.completed_at).toEqual(expect.any(String));
    expect(job.errors.map((e: { line: number; field: string | null; code: string }) => [e.line, e.field, e.code])).toEqual([
      [4, 'email', 'invalid_value'],
      [5, 'stage', 'invalid_value'],
      [6, null, 'invalid_request'],
      [7, 'email', 'invalid_value'],
      [8, 'custom_fields.tier', 'invalid_type'],
    ]);

    const contacts = (await stack.api.listAll('/contacts?search=import.test')) as Array<{ id: string; email: string }>;
    const ada = contacts.find((c) => c.email === 'ada@import.test')!;
    expect((await stack.api.get(`/contacts/${ada.id}`)).body.data).toMatchObject({
      first_name: 'Ada',
      last_name: 'Lovelace',
      stage: 'lead',
      icp_score: 80,
      custom_fields: { tier: 1 },
      metadata: { origin: 'fair' },
    });
    expect((await stack.api.get(`/contacts/${existing.id}`)).body.data).toMatchObject({ first_name: 'New', stage: 'customer' });
    expect(contacts.map((c) => c.email).sort()).toEqual(['ada@import.test', 'known@import.test']);

    // The same events as single writes, and the import's own.
    const events = await eventually(async () => {
      const all = (await stack.api.listAll('/events')) as Array<{ type: string; data: Record<string, any> }>;
      return all.some((e) => e.type === 'import.completed' && e.data.import_id === job.id) ? all : undefined;
    });
    expect(events.filter((e) => e.type === 'contact.created' && e.data.contact_id === ada.id)).toHaveLength(1);
    expect(events.filter((e) => e.type === 'contact.updated' && e.data.contact_id === existing.id)).toHaveLength(1);
    expect(events.find((e) => e.type === 'import.completed' && e.data.import_id === job.id)!.data).toEqual({
      import_id: job.id,
      object: 'contacts',
      status: 'completed',
      counts: { total: 7, processed: 7, created: 1, updated: 1, failed: 5 },
    });
  });

  it('imports companies from NDJSON, upserting by domain, with unreadable lines reported and skipped', async () => {
    const acme = (await stack.api.post('/companies', { name: 'Acme', domain: 'acme.import.test' })).body.data;
    const ndjson = [
      JSON.stringify({ name: 'Acme Corp', domain: 'ACME.import.test', industry: 'Rockets' }),
      '{not json',
      JSON.stringify({ name: 'Globex', domain: 'globex.import.test' }),
      '',
      JSON.stringify(['an', 'array']),
      JSON.stringify({ name: 'Null\u0000Byte' }),
      JSON.stringify({ domain: 'nameless.import.test' }),
    ].join('\n');
    const res = await upload('companies', 'application/x-ndjson', ndjson);
    expect(res.status).toBe(202);
    const job = await finished((await json(res)).data.id);
    expect(job.counts).toEqual({ total: 6, processed: 6, created: 1, updated: 1, failed: 4, skipped: 0 });
    expect(job.errors.map((e: { line: number; code: string }) => `${e.line}:${e.code}`)).toEqual([
      '2:invalid_request',
      '5:invalid_request',
      '6:validation_failed',
      '7:required',
    ]);
    expect((await stack.api.get(`/companies/${acme.id}`)).body.data).toMatchObject({ name: 'Acme Corp', industry: 'Rockets' });
    expect((await stack.api.get('/companies?domain=globex.import.test')).body.data).toHaveLength(1);
  });

  it('imports deals from CSV through the deals service, with the same checks as a single create', async () => {
    const pipeline = (
      await stack.api.post('/pipelines', {
        name: 'Imported',
        stages: [
          { name: 'New', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      })
    ).body.data;
    const [open, won] = pipeline.stages as Array<{ id: string }>;
    const contact = (await stack.api.post('/contacts', { email: 'buyer@import.test' })).body.data;
    const csv = [
      'name,pipeline_id,stage_id,value,currency,contact_id',
      `Big one,${pipeline.id},${open.id},120000,eur,${contact.id}`,
      `Closed,${pipeline.id},${won.id},5000,,`,
      `Nowhere,${pipeline.id},stg_01aaaaaaaaaaaaaaaaaaaaaaaa,1,,`,
      `Nobody,${pipeline.id},${open.id},1,,cont_01aaaaaaaaaaaaaaaaaaaaaaaa`,
      `Cheap,${pipeline.id},${open.id},-5,,`,
    ].join('\n');
    const res = await upload('deals', 'text/csv', csv);
    expect(res.status).toBe(202);
    const job = await finished((await json(res)).data.id);
    expect(job.counts).toEqual({ total: 5, processed: 5, created: 2, updated: 0, failed: 3, skipped: 0 });
    expect(job.errors.map((e: { line: number; field: string | null }) => `${e.line}:${e.field}`)).toEqual(['4:stage_id', '5:contact_id', '6:value']);
    const deals = (await stack.api.listAll(`/deals?pipeline_id=${pipeline.id}`)) as Array<{
      name: string;
      value: number;
      currency: string;
      status: string;
      contact_id: string | null;
    }>;
    expect(deals.map((d) => [d.name, d.value, d.currency, d.status, d.contact_id])).toEqual([
      ['Big one', 120000, 'EUR', 'open', contact.id],
      ['Closed', 5000, 'USD', 'won', null],
    ]);
  });

  it('has the deals service apply a batch once however often the import job asks', async () => {
    const pipeline = (await stack.api.post('/pipelines', { name: 'Twice', stages: [{ name: 'New', type: 'open' }] })).body.data;
    const batch = {
      import_id: 'imp_01bbbbbbbbbbbbbbbbbbbbbbbb',
      first_seq: 0,
      format: 'ndjson',
      rows: [{ line: 1, values: { name: 'Once', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id } }],
    };
    const first = await askService(stack, Ops.dealsInternal.importBatch.name, batch);
    const again = await askService(stack, Ops.dealsInternal.importBatch.name, batch);
    expect(again).toEqual(first);
    expect(first).toEqual({ created: 1, failed: 0, errors: [] });
    expect((await stack.api.listAll(`/deals?pipeline_id=${pipeline.id}`)).length).toBe(1);
  });

  it('refuses what cannot be an import, in the error shape, before or while reading it', async () => {
    const jsonRes = await upload('contacts', 'application/json', '{}');
    expect(jsonRes.status).toBe(415);
    expect((await json(jsonRes)).error.code).toBe('unsupported_media_type');
    const unknown = await upload('stages', 'text/csv', 'email\n');
    expect(unknown.status).toBe(400);
    expect((await json(unknown)).error.details).toEqual([expect.objectContaining({ field: 'object' })]);
    const readKey = (await stack.api.post('/apikeys', { name: 'reader', scope: 'read' })).body.data.key;
    const forbidden = await fetch(`${stack.gateway.url}/imports?object=contacts`, {
      method: 'POST',
      headers: { 'X-Api-Key': readKey, 'Content-Type': 'text/csv' },
      body: 'email\n',
    });
    expect(forbidden.status).toBe(403);

    const broken = await upload('contacts', 'text/csv', 'email,first_name\n"unterminated@import.test,Broken\n');
    expect(broken.status).toBe(400);
    const brokenError = (await json(broken)).error;
    expect(brokenError.message).toMatch(/could not be read as CSV.*failed; nothing was applied/);
    const failedId = /Import '(imp_[0-9a-z]+)'/.exec(brokenError.message)![1];
    expect((await stack.api.get(`/imports/${failedId}`)).body.data).toMatchObject({
      status: 'failed',
      failure_reason: expect.stringMatching(/could not be read as CSV/),
    });
    expect((await stack.api.get('/contacts?search=unterminated')).body.data).toEqual([]);

    const header = await upload('contacts', 'text/csv', 'email,email\na@import.test,b@import.test\n');
    expect(header.status).toBe(400);
    expect((await json(header)).error.message).toMatch(/names the column 'email' twice/);

    const huge = await upload('contacts', 'application/x-ndjson', Buffer.alloc(50 * 1024 * 1024 + 10, 'a'));
    expect(huge.status).toBe(413);
    expect((await json(huge)).error.code).toBe('payload_too_large');

    const listed = (await stack.api.listAll('/imports')) as Array<{ id: string; status: string }>;
    expect(listed.find((j) => j.id === failedId)?.status).toBe('failed');
    expect((await stack.api.get('/imports/imp_01aaaaaaaaaaaaaaaaaaaaaaaa')).status).toBe(404);
  });

  it('replays a retried upload with the same Idempotency-Key instead of importing twice', async () => {
    const csv = 'email\nonce@import.test\n';
    const first = await upload('contacts', 'text/csv', csv, { 'Idempotency-Key': 'import-once' });
    const again = await upload('contacts', 'text/csv', csv, { 'Idempotency-Key': 'import-once' });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await json(again)).data.id).toBe((await json(first)).data.id);
  });

  it('imports a file from the command line (npm run import), reporting the outcome and the rejected rows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-import-'));
    try {
      const good = join(dir, 'people.csv');
      writeFileSync(good, 'email,first_name\ncli1@import.test,One\ncli2@import.test,Two\n');
      const ok = await runBuilt('scripts/import.js', ['--url', stack.gateway.url, '--key', stack.apiKey, good], {});
      expect({ status: ok.status, stderr: ok.stderr }).toMatchObject({ status: 0 });
      expect(ok.stdout).toMatch(/^imp_[0-9a-z]{26} completed: 2 created, 0 updated, 0 failed of 2\n$/);

      const bad = join(dir, 'firms.ndjson');
      writeFileSync(bad, `${JSON.stringify({ name: 'Cli Co', domain: 'cli.import.test' })}\n${JSON.stringify({ domain: 'noname.import.test' })}\n`);
      const partly = await runBuilt('scripts/import.js', ['--object', 'companies', '--url', stack.gateway.url, '--key', stack.apiKey, bad], {});
      expect(partly.status).toBe(1);
      expect(partly.stdout).toMatch(/completed: 1 created, 0 updated, 1 failed of 2\n  line 2 name: name is required\n$/);
      expect(partly.stdout + partly.stderr).not.toContain(stack.apiKey);

      const unknownType = await runBuilt('scripts/import.js', ['--url', stack.gateway.url, '--key', stack.apiKey, join(dir, 'notes.txt')], {});
      expect(unknownType.status).toBe(1);
      expect(unknownType.stderr).toMatch(/must end in \.csv, \.ndjson or \.jsonl/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resumes after the contacts service restarts mid-import, applying every row exactly once', async () => {
    const rows = 3000;
    const csv = ['email,first_name', ...Array.from({ length: rows }, (_, i) => `bulk${i}@resume.test,Bulk ${i}`)].join('\n');
    const res = await upload('contacts', 'text/csv', csv);
    expect(res.status).toBe(202);
    const id = (await json(res)).data.id;
    const midway = await eventually(
      async () => {
        const job = (await stack.api.get(`/imports/${id}`)).body.data;
        return job.counts.processed > 0 ? job : undefined;
      },
      120_000,
      20,
    );
    await stack.stopService('contacts');
    // Stopped with rows still to apply (a stop lets the batch in hand commit first).
    const [{ left }] = (await stack.services.events!.dataSource.query(`SELECT count(*)::int AS left FROM contacts.import_rows WHERE import_id = $1`, [
      id,
    ])) as Array<{ left: number }>;
    expect({ processed: midway.counts.processed < rows, left: left > 0 }).toEqual({ processed: true, left: true });
    await stack.startService('contacts');

    const job = await finished(id, 120_000);
    expect(job.counts).toEqual({ total: rows, processed: rows, created: rows, updated: 0, failed: 0, skipped: 0 });
    const stored = (await stack.api.listAll('/contacts?search=resume.test')) as Array<{ id: string }>;
    expect(stored).toHaveLength(rows);
    const created = await eventually(
      async () => {
        const events = (await stack.api.listAll('/events?type=contact.created')) as Array<{ data: { email: string } }>;
        const mine = events.filter((e) => e.data.email.endsWith('@resume.test'));
        return mine.length >= rows ? mine : undefined;
      },
      120_000,
      500,
    );
    expect(new Set(created.map((e) => e.data.email)).size).toBe(rows);
    expect(created).toHaveLength(rows);
  }, 420_000);
});

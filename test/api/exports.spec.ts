import { applyEvent, createCrmClient, exportRecords, followLog } from '@crm/sdk';
import { createHash, randomBytes } from 'crypto';
import { parse } from 'csv-parse/sync';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { gunzipSync } from 'zlib';
import { eventually } from '../support/api-client';
import { downloadRows, ExportHandoff, finishedExport, queryAll, Row, withoutVersions } from '../support/export-handoff';
import { runBuilt } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

const CONTACTS = 3000;
const DEALS = 600;
const tag = randomBytes(4).toString('hex');

/**
 * Exports (docs/exports.md): an export taken while another client writes, plus the events after its as_of
 * applied with the documented rule, is exactly what the queries answer once the writes stop.
 */
describe('Exports', () => {
  let stack: TestStack;
  let handoff: ExportHandoff;

  beforeAll(async () => {
    stack = await startStack({
      services: ['contacts', 'deals', 'events'],
      env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000', RPC_TIMEOUT_MS: '60000', EXPORTS_POLL_MS: '100' },
    });
    handoff = new ExportHandoff(stack.api, tag);
  });
  afterAll(() => stack?.stop());

  const finished = (id: string) => finishedExport(stack.api, id);

  it('hands off to the log: the files plus the events after as_of rebuild exactly what the queries answer', async () => {
    await handoff.seed(CONTACTS, DEALS);
    const { done, copy, contacts, deals, writesDuring } = await handoff.run();
    expect(done.status).toBe('completed');
    expect(done.as_of).toEqual(expect.any(String));
    expect(writesDuring).toBeGreaterThan(10);
    expect(contacts.size).toBeGreaterThan(CONTACTS / 2);
    expect(withoutVersions(copy.contacts)).toEqual(contacts);
    expect(withoutVersions(copy.deals)).toEqual(deals);
  }, 900_000);

  it("hands off the same way through the SDK: exportRecords, then followLog's pages with applyEvent", async () => {
    const client = createCrmClient({ baseUrl: stack.gateway.url, apiKey: stack.apiKey });
    const dealIds = [...(await queryAll(stack.api, '/deals/query')).keys()];
    let writing = true;
    let writes = 0;
    const writer = (async () => {
      for (let n = 0; writing; n++) {
        const res =
          n % 3 === 0
            ? await stack.api.post('/deals', handoff.dealBody(`S${n}`, n))
            : n % 3 === 1
              ? await stack.api.patch(`/deals/${dealIds[n % dealIds.length]}`, { name: `SU${n}`, value: n })
              : await stack.api.delete(`/deals/${dealIds.splice(n % dealIds.length, 1)[0]}`);
        if (res.status >= 500) throw new Error(`write answered ${res.status}: ${res.text}`);
        if (res.status === 201) dealIds.push(res.body.data.id);
        writes++;
      }
    })();
    await eventually(async () => (writes >= 10 ? true : undefined));
    const { export: done, copy } = await exportRecords(client, { objects: ['deals'], compression: 'gzip' }, { pollMs: 100 });
    expect(done).toMatchObject({ status: 'completed', compression: 'gzip', files: [{ name: 'deals.ndjson.gz', object: 'deals' }] });
    expect(copy.deals.size).toBe(done.files[0].rows);
    const atDone = writes;
    await eventually(async () => (writes >= atDone + 20 ? true : undefined));
    writing = false;
    await writer;

    const marker = (await stack.api.post('/deals', handoff.dealBody(`SDK marker ${tag}`))).body.data.id;
    const gaveUp = new AbortController();
    const deadline = setTimeout(() => gaveUp.abort(new Error('the marker did not reach the log in 120 s')), 120_000);
    try {
      for await (const { events } of followLog(client, done.as_of!, { pollMs: 100, signal: gaveUp.signal })) {
        for (const event of events) applyEvent(copy, event);
        if (events.some((e) => (e.data as { deal_id?: string }).deal_id === marker)) break;
      }
    } finally {
      clearTimeout(deadline);
    }
    expect(withoutVersions(copy.deals as Map<string, Row>)).toEqual(await queryAll(stack.api, '/deals/query'));
  }, 600_000);

  it('answers every bad request in the error shape, naming the input at fault', async () => {
    const refused = async (body: unknown, field: string) => {
      const res = await stack.api.post('/exports', body);
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContainEqual(expect.stringMatching(new RegExp(`^${field.replace('.', '\\.')}`)));
    };
    await refused({}, 'objects');
    await refused({ objects: [] }, 'objects');
    await refused({ objects: ['widgets'] }, 'objects');
    await refused({ objects: ['contacts', 'contacts'] }, 'objects');
    await refused({ objects: ['contacts'], format: 'xml' }, 'format');
    await refused({ objects: ['contacts'], filter: { contacts: { no_such_field: 1 } } }, 'filter.contacts');
    await refused({ objects: ['contacts'], filter: { contacts: { email: { $bogus: 1 } } } }, 'filter.contacts');
    await refused({ objects: ['contacts'], filter: { deals: {} } }, 'filter.deals');
    await refused({ objects: ['contacts'], filter: { contacts: [] } }, 'filter.contacts');
    await refused({ objects: ['deals'], fields: { deals: ['name', 'no_such_field'] } }, 'fields.deals');

    for (const id of ['exp_01aaaaaaaaaaaaaaaaaaaaaaaa', 'not-an-id']) {
      const res = await stack.api.get(`/exports/${id}`);
      expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 404, code: 'not_found' });
      expect((await stack.api.get(`/exports/${id}/files/contacts.ndjson`)).status).toBe(404);
    }
  });

  it('streams a file whole or in ranges that resume it, and refuses a range that does not fit', async () => {
    const started = await stack.api.post('/exports', {
      objects: ['contacts'],
      filter: { contacts: { email: { $starts_with: 'c1' } } },
      fields: { contacts: ['email'] },
    });
    expect(started.status).toBe(202);
    const done = await finished(started.body.data.id);
    expect(done.status).toBe('completed');
    const [file] = done.files;
    expect(file).toMatchObject({ name: 'contacts.ndjson', object: 'contacts' });
    const rows = await downloadRows(stack.api, done.id, file);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(['email', 'id', 'version']);
    expect(rows.every((r) => String(r.email).startsWith('c1'))).toBe(true);

    const url = `${stack.gateway.url}/exports/${done.id}/files/${file.name}`;
    const whole = Buffer.from(await (await fetch(url, { headers: { 'X-Api-Key': stack.apiKey } })).arrayBuffer());
    const part = async (range: string) => fetch(url, { headers: { 'X-Api-Key': stack.apiKey, Range: range } });
    const first = await part('bytes=0-99');
    expect(first.status).toBe(206);
    expect(first.headers.get('content-range')).toBe(`bytes 0-99/${file.bytes}`);
    const rest = await part('bytes=100-');
    expect(rest.status).toBe(206);
    const resumed = Buffer.concat([Buffer.from(await first.arrayBuffer()), Buffer.from(await rest.arrayBuffer())]);
    expect(resumed.equals(whole)).toBe(true);
    const tail = await part('bytes=-10');
    expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(whole.length - 10))).toBe(true);

    for (const range of [`bytes=${file.bytes}-`, 'bytes=50-10', 'items=0-1', 'bytes=0-1,5-9']) {
      const res = await stack.api.get(`/exports/${done.id}/files/${file.name}`, { headers: { Range: range } });
      expect({ range, status: res.status, code: res.body.error?.code }).toEqual({ range, status: 416, code: 'range_not_satisfiable' });
    }
    expect((await stack.api.get(`/exports/${done.id}/files/deals.ndjson`)).status).toBe(404);
  });

  it('writes CSV and gzip: the same records as NDJSON, null and empty apart, objects as JSON, the manifest of the bytes served', async () => {
    // A value CSV must quote: commas, quotes and a line break, inside metadata.
    const odd = await stack.api.post('/contacts', { email: `odd-${tag}@export.example`, metadata: { note: 'a, "b"\nc' } });
    expect(odd.status).toBe(201);
    for (const n of [1, 2]) expect((await stack.api.post('/contacts', { email: `csv${n}-${tag}@export.example`, first_name: `Csv ${n}` })).status).toBe(201);
    const filter = { contacts: { email: { $in: [`csv1-${tag}@export.example`, `csv2-${tag}@export.example`, `odd-${tag}@export.example`] } } };
    const exported = async (body: Record<string, unknown>) => {
      const fields = { contacts: ['email', 'first_name', 'stage', 'metadata', 'custom_fields'] };
      const started = await stack.api.post('/exports', { objects: ['contacts'], filter, fields, ...body });
      expect(started.status).toBe(202);
      const done = await finished(started.body.data.id);
      expect(done.status).toBe('completed');
      const [file] = done.files;
      const res = await fetch(`${stack.gateway.url}/exports/${done.id}/files/${file.name}`, { headers: { 'X-Api-Key': stack.apiKey } });
      expect(res.status).toBe(200);
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.length).toBe(file.bytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.sha256);
      return { done, file, bytes, type: res.headers.get('content-type') };
    };
    const ndjson = await exported({});
    const csv = await exported({ format: 'csv' });
    const gzipped = await exported({ format: 'csv', compression: 'gzip' });
    expect(csv.done).toMatchObject({ format: 'csv', compression: null });
    expect(gzipped.done).toMatchObject({ format: 'csv', compression: 'gzip' });
    expect([csv.file.name, gzipped.file.name]).toEqual(['contacts.csv', 'contacts.csv.gz']);
    expect(csv.type).toBe('text/csv; charset=utf-8');
    expect(gzipped.type).toBe('application/gzip');
    expect(gunzipSync(gzipped.bytes).equals(csv.bytes)).toBe(true);
    expect(gzipped.file.rows).toBe(3);

    // Each CSV cell is the NDJSON value as text: null unquoted and empty, '' quoted, objects as JSON.
    const records: Array<Record<string, string | null>> = parse(csv.bytes, {
      columns: true,
      cast: (value: string, context: { quoting: boolean }) => (value === '' && !context.quoting ? null : value),
    });
    const rows = ndjson.bytes
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Row);
    expect(records).toHaveLength(rows.length);
    const asText = (v: unknown) => (v === null ? null : typeof v === 'object' ? JSON.stringify(v) : String(v));
    expect(records).toEqual(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, asText(v)]))));
    const oddRecord = records.find((r) => r.id === odd.body.data.id)!;
    expect(JSON.parse(oddRecord.metadata!)).toEqual({ note: 'a, "b"\nc' });
    expect(oddRecord.first_name).toBeNull();

    await refusedCompression();
  });

  it('exports from the command line (npm run export) into a directory: the files, checked, and manifest.json with as_of', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-export-'));
    try {
      const run = await runBuilt(
        'scripts/export.js',
        ['--objects', 'deals,contacts', '--format', 'csv', '--gzip', '--out', dir, '--url', stack.gateway.url, '--key', stack.apiKey],
        {},
      );
      expect({ status: run.status, stderr: run.stderr }).toMatchObject({ status: 0 });
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
      expect(manifest).toMatchObject({ status: 'completed', format: 'csv', compression: 'gzip', as_of: expect.any(String) });
      expect(readdirSync(dir).sort()).toEqual(['contacts.csv.gz', 'deals.csv.gz', 'manifest.json']);
      for (const file of manifest.files as Array<{ name: string; rows: number; sha256: string }>) {
        const bytes = readFileSync(join(dir, file.name));
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.sha256);
        expect(parse(gunzipSync(bytes), { columns: true })).toHaveLength(file.rows);
      }
      expect(run.stdout).toContain(`as_of ${manifest.as_of}\n`);
      expect(run.stdout + run.stderr).not.toContain(stack.apiKey);

      const refused = await runBuilt('scripts/export.js', ['--objects', 'widgets', '--url', stack.gateway.url, '--key', stack.apiKey], {});
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/POST \/exports answered 400: objects must be among contacts, deals/);
      expect(existsSync(join(dir, 'widgets.ndjson'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  async function refusedCompression() {
    const res = await stack.api.post('/exports', { objects: ['contacts'], compression: 'zip' });
    expect({ status: res.status, fields: res.body.error?.details?.map((d: { field: string }) => d.field) }).toEqual({ status: 400, fields: ['compression'] });
  }

  it('needs exports:read and read on every object it copies, and caps the unfinished exports of a key', async () => {
    const keyWith = async (scopes: string[]) =>
      stack.api.withKey((await stack.api.post('/apikeys', { name: `exports ${scopes.join(' ')}`, scopes })).body.data.key);
    const contactsOnly = await keyWith(['exports:read', 'contacts:read']);
    const lacking = await contactsOnly.post('/exports', { objects: ['contacts', 'deals'] });
    expect({ status: lacking.status, named: lacking.body.error?.details?.[0]?.message }).toEqual({ status: 403, named: 'deals:read' });
    const noExports = await (await keyWith(['contacts:read', 'deals:read'])).post('/exports', { objects: ['contacts'] });
    expect({ status: noExports.status, named: noExports.body.error?.details?.[0]?.message }).toEqual({ status: 403, named: 'exports:read' });
    const dealsExport = (await stack.api.post('/exports', { objects: ['deals'], filter: { deals: { name: 'none' } } })).body.data;
    const shown = await contactsOnly.get(`/exports/${dealsExport.id}`);
    expect({ status: shown.status, named: shown.body.error?.details?.[0]?.message }).toEqual({ status: 403, named: 'deals:read' });

    // EXPORTS_MAX_RUNNING_PER_KEY is 2: a third unfinished one is refused until one finishes. A replica runs one
    // export at a time, so while it copies every record for another key, these three wait in the queue.
    const blocker = (await stack.api.post('/exports', { objects: ['contacts', 'deals'] })).body.data;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await contactsOnly.post('/exports', { objects: ['contacts'] }));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 409]);
    expect(answers[2].body.error.code).toBe('conflict');
    await finished(answers[0].body.data.id);
    await finished(answers[1].body.data.id);
    expect((await contactsOnly.post('/exports', { objects: ['contacts'] })).status).toBe(202);
    expect((await finished(blocker.id)).status).toBe('completed');
  });
});

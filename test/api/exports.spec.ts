import { applyEvent, createCrmClient, exportRecords, followLog } from '@crm/sdk';
import { createHash, randomBytes } from 'crypto';
import { parse } from 'csv-parse/sync';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { gunzipSync } from 'zlib';
import { ApiClient, eventually } from '../support/api-client';
import { runBuilt } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

type Row = Record<string, unknown> & { id: string; version?: number };
type Copy = Record<'contacts' | 'deals', Map<string, Row>>;
interface LoggedEvent {
  type: string;
  data: Record<string, any>;
}

const CONTACTS = 3000;
const DEALS = 600;
const tag = randomBytes(4).toString('hex');

/** The client rule of docs/exports.md, as a client would write it: apply an event unless the copy is newer; a delete removes. */
function apply(copy: Copy, e: LoggedEvent): void {
  const [noun, action] = e.type.split('.');
  const rows = (copy as Record<string, Map<string, Row> | undefined>)[`${noun}s`];
  const id = e.data[`${noun}_id`];
  if (!rows) return;
  if (action === 'deleted') return void rows.delete(id);
  if (action !== 'created' && action !== 'updated') return;
  if ((rows.get(id)?.version ?? -1) > e.data.version) return;
  rows.set(id, { ...(e.data.record ?? { ...rows.get(id), ...e.data.current }), version: e.data.version });
}

/** Every item of a query, by id, page after page. */
async function queryAll(api: ApiClient, path: string): Promise<Map<string, Row>> {
  const rows = new Map<string, Row>();
  let cursor: string | undefined;
  do {
    const res = await api.post(path, { limit: 200, ...(cursor ? { cursor } : {}) });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
    for (const item of res.body.data as Row[]) rows.set(item.id, item);
    cursor = res.body.has_more ? res.body.next_cursor : undefined;
  } while (cursor);
  return rows;
}

/** A file of an export, whole, checked against its manifest entry. */
async function download(stack: TestStack, id: string, file: { name: string; bytes: number; sha256: string; rows: number }): Promise<Row[]> {
  const res = await fetch(`${stack.gateway.url}/exports/${id}/files/${file.name}`, { headers: { 'X-Api-Key': stack.apiKey } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/x-ndjson');
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(bytes.length).toBe(file.bytes);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.sha256);
  // A range across the boundary of two stored pieces (256 KiB each) is the same bytes as the whole file's.
  if (bytes.length > 262_144 + 100) {
    const across = await fetch(`${stack.gateway.url}/exports/${id}/files/${file.name}`, {
      headers: { 'X-Api-Key': stack.apiKey, Range: 'bytes=262100-262199' },
    });
    expect(Buffer.from(await across.arrayBuffer()).equals(bytes.subarray(262_100, 262_200))).toBe(true);
  }
  const lines = bytes.toString('utf8').split('\n').filter(Boolean);
  expect(lines).toHaveLength(file.rows);
  return lines.map((line) => JSON.parse(line) as Row);
}

/**
 * Exports (docs/exports.md): an export taken while another client writes, plus the events after its as_of
 * applied with the documented rule, is exactly what the queries answer once the writes stop.
 */
describe('Exports', () => {
  let stack: TestStack;
  let stages: Array<{ id: string }>;
  let pipelineId: string;

  beforeAll(async () => {
    stack = await startStack({
      services: ['contacts', 'deals', 'events'],
      env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000', RPC_TIMEOUT_MS: '60000', EXPORTS_POLL_MS: '100' },
    });
    const pipeline = await stack.api.post('/pipelines', {
      name: `Exports ${tag}`,
      stages: [
        { name: 'New', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    pipelineId = pipeline.body.data.id;
    stages = pipeline.body.data.stages;
  });
  afterAll(() => stack?.stop());

  async function batch(path: string, operation: string, items: unknown[]): Promise<string[]> {
    const res = await stack.api.post(path, { operation, items });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
    return res.body.data.map((r: { status: number; data?: { id: string }; error?: unknown }) => {
      if (!r.data) throw new Error(`${path} item failed: ${JSON.stringify(r.error)}`);
      return r.data.id;
    });
  }

  async function finished(id: string) {
    return eventually(async () => {
      const res = await stack.api.get(`/exports/${id}`);
      expect(res.status).toBe(200);
      return res.body.data.status === 'queued' || res.body.data.status === 'running' ? undefined : res.body.data;
    }, 240_000);
  }

  /** The log from `cursor` until both markers are in it (each service logs its events in commit order). */
  async function eventsUntil(cursor: string, markers: Array<(e: LoggedEvent) => boolean>): Promise<LoggedEvent[]> {
    const events: LoggedEvent[] = [];
    let at = cursor;
    return eventually(async () => {
      for (;;) {
        const res = await stack.api.get(`/events?limit=200&cursor=${encodeURIComponent(at)}`);
        if (res.status !== 200) throw new Error(`GET /events answered ${res.status}: ${res.text}`);
        events.push(...res.body.data);
        at = res.body.next_cursor;
        if (markers.every((m) => events.some(m))) return events;
        if (!res.body.has_more) return undefined;
      }
    }, 120_000);
  }

  it('hands off to the log: the files plus the events after as_of rebuild exactly what the queries answer', async () => {
    const contactIds: string[] = [];
    for (let i = 0; i < CONTACTS; i += 200) {
      const items = Array.from({ length: Math.min(200, CONTACTS - i) }, (_, j) => ({ email: `c${i + j}-${tag}@export.example`, first_name: `C${i + j}` }));
      contactIds.push(...(await batch('/contacts/batch', 'create', items)));
    }
    const dealIds: string[] = [];
    for (let i = 0; i < DEALS; i += 200) {
      const items = Array.from({ length: Math.min(200, DEALS - i) }, (_, j) => ({
        name: `D${i + j}`,
        pipeline_id: pipelineId,
        stage_id: stages[0].id,
        value: i + j,
        contact_id: contactIds[i + j],
      }));
      dealIds.push(...(await batch('/deals/batch', 'create', items)));
    }

    // Another client writes at a steady pace (one change at a time) until the export is done and a while after.
    let writing = true;
    let writes = 0;
    let n = 0;
    const pick = (ids: string[]) => ids.splice(Math.floor(Math.random() * ids.length), 1)[0];
    const writer = (async () => {
      while (writing) {
        const step = n++ % 6;
        let res;
        if (step === 0) {
          res = await stack.api.post('/contacts', { email: `w${n}-${tag}@export.example`, first_name: `W${n}` });
          if (res.status === 201) contactIds.push(res.body.data.id);
        } else if (step === 1) {
          const id = contactIds[Math.floor(Math.random() * contactIds.length)];
          res = await stack.api.patch(`/contacts/${id}`, { first_name: `U${n}`, stage: n % 2 ? 'lead' : 'customer' });
        } else if (step === 2) {
          res = await stack.api.delete(`/contacts/${pick(contactIds)}`);
        } else if (step === 3) {
          res = await stack.api.post('/deals', { name: `W${n}`, pipeline_id: pipelineId, stage_id: stages[0].id, value: n });
          if (res.status === 201) dealIds.push(res.body.data.id);
        } else if (step === 4) {
          const id = dealIds[Math.floor(Math.random() * dealIds.length)];
          res = await stack.api.patch(`/deals/${id}`, { name: `U${n}`, value: n, stage_id: stages[n % 2].id });
        } else {
          res = await stack.api.delete(`/deals/${pick(dealIds)}`);
        }
        // A record deleted by an earlier step may be updated (404): that is a client's race, not a failure.
        if (res.status >= 500) throw new Error(`write answered ${res.status}: ${res.text}`);
        writes++;
      }
    })();

    await eventually(async () => (writes >= 30 ? true : undefined));
    const started = await stack.api.post('/exports', { objects: ['contacts', 'deals'] });
    expect(started.status).toBe(202);
    expect(started.body.data).toMatchObject({ status: 'queued', objects: ['contacts', 'deals'], format: 'ndjson', as_of: null, files: [] });
    const atStart = writes;
    const done = await finished(started.body.data.id);
    const during = writes - atStart;
    await eventually(async () => (writes >= atStart + during + 60 ? true : undefined), 120_000);
    writing = false;
    await writer;

    expect(done.status).toBe('completed');
    expect(done.as_of).toEqual(expect.any(String));
    expect(during).toBeGreaterThan(10);
    const copy: Copy = { contacts: new Map(), deals: new Map() };
    for (const file of done.files) {
      for (const row of await download(stack, done.id, file)) copy[file.object as 'contacts' | 'deals'].set(row.id, row);
    }
    expect(done.progress).toEqual({ contacts: { rows: copy.contacts.size }, deals: { rows: copy.deals.size } });

    // Markers through each service: once both are in the log, every earlier change of either is too.
    const contactMarker = (await stack.api.post('/contacts', { email: `marker-${tag}@export.example` })).body.data.id;
    const dealMarker = (await stack.api.post('/deals', { name: `Marker ${tag}`, pipeline_id: pipelineId, stage_id: stages[0].id })).body.data.id;
    const events = await eventsUntil(done.as_of, [(e) => e.data.contact_id === contactMarker, (e) => e.data.deal_id === dealMarker]);
    for (const e of events) apply(copy, e);

    const strip = (rows: Map<string, Row>) => new Map([...rows].map(([id, { version: _version, ...row }]) => [id, row]));
    const [contacts, deals] = [await queryAll(stack.api, '/contacts/query'), await queryAll(stack.api, '/deals/query')];
    expect(contacts.size).toBeGreaterThan(CONTACTS / 2);
    expect(strip(copy.contacts)).toEqual(contacts);
    expect(strip(copy.deals)).toEqual(deals);
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
            ? await stack.api.post('/deals', { name: `S${n}`, pipeline_id: pipelineId, stage_id: stages[0].id, value: n })
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

    const marker = (await stack.api.post('/deals', { name: `SDK marker ${tag}`, pipeline_id: pipelineId, stage_id: stages[0].id })).body.data.id;
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
    const strip = (rows: Map<string, Row>) => new Map([...rows].map(([id, { version: _version, ...row }]) => [id, row]));
    expect(strip(copy.deals)).toEqual(await queryAll(stack.api, '/deals/query'));
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
    const rows = await download(stack, done.id, file);
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

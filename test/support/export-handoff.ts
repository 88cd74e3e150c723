import { createHash } from 'crypto';
import { ApiClient, eventually } from './api-client';

export type Row = Record<string, unknown> & { id: string; version?: number };
export type Copy = Record<'contacts' | 'deals', Map<string, Row>>;

export interface LoggedEvent {
  type: string;
  data: Record<string, any>;
}

export interface ExportFile {
  name: string;
  object: string;
  bytes: number;
  sha256: string;
  rows: number;
}

export interface ExportView {
  id: string;
  status: string;
  as_of: string | null;
  files: ExportFile[];
  progress: Record<string, { rows: number; estimated_total?: number }>;
  error?: unknown;
}

/** The client rule of docs/exports.md, as a client would write it: apply an event unless the copy is newer; a delete removes. */
export function applyLogged(copy: Copy, e: LoggedEvent): void {
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
export async function queryAll(api: ApiClient, path: string): Promise<Map<string, Row>> {
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
export async function downloadRows(api: ApiClient, id: string, file: ExportFile): Promise<Row[]> {
  const url = `${api.baseUrl}/exports/${id}/files/${file.name}`;
  const res = await fetch(url, { headers: { 'X-Api-Key': api.apiKey } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/x-ndjson');
  const bytes = Buffer.from(await res.arrayBuffer());
  expect(bytes.length).toBe(file.bytes);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(file.sha256);
  // A range across the boundary of two stored pieces (256 KiB each) is the same bytes as the whole file's.
  if (bytes.length > 262_144 + 100) {
    const across = await fetch(url, { headers: { 'X-Api-Key': api.apiKey, Range: 'bytes=262100-262199' } });
    expect(Buffer.from(await across.arrayBuffer()).equals(bytes.subarray(262_100, 262_200))).toBe(true);
  }
  const lines = bytes.toString('utf8').split('\n').filter(Boolean);
  expect(lines).toHaveLength(file.rows);
  return lines.map((line) => JSON.parse(line) as Row);
}

/** The export once it is neither queued nor running. A gateway answering 503 (a service restarting) is asked again. */
export async function finishedExport(api: ApiClient, id: string): Promise<ExportView> {
  return eventually(async () => {
    const res = await api.get(`/exports/${id}`);
    if (res.status === 503) return undefined;
    expect(res.status).toBe(200);
    return res.body.data.status === 'queued' || res.body.data.status === 'running' ? undefined : (res.body.data as ExportView);
  }, 600_000);
}

export interface HandoffResult {
  done: ExportView;
  /** The files plus the events after `as_of`, applied by the rule. */
  copy: Copy;
  /** What the queries answer once the writes stopped. */
  contacts: Map<string, Row>;
  deals: Map<string, Row>;
  /** Writes acknowledged while the export ran. */
  writesDuring: number;
}

/**
 * The handoff of docs/exports.md driven as a client would: records seeded through the batch routes, then an
 * export taken while another client creates, updates and deletes contacts and deals one at a time, then the
 * files plus the events after `as_of` applied with the documented rule, beside what the queries answer once
 * the writes stop.
 */
export class ExportHandoff {
  readonly contactIds: string[] = [];
  readonly dealIds: string[] = [];
  private pipelineId = '';
  private stageIds: string[] = [];

  constructor(
    private readonly api: ApiClient,
    private readonly tag: string,
  ) {}

  async seed(contacts: number, deals: number): Promise<void> {
    const pipeline = await this.api.post('/pipelines', {
      name: `Exports ${this.tag}`,
      stages: [
        { name: 'New', type: 'open' },
        { name: 'Won', type: 'won' },
        { name: 'Lost', type: 'lost' },
      ],
    });
    if (pipeline.status !== 201) throw new Error(`POST /pipelines answered ${pipeline.status}: ${pipeline.text}`);
    this.pipelineId = pipeline.body.data.id;
    this.stageIds = pipeline.body.data.stages.map((s: { id: string }) => s.id);
    for (let i = 0; i < contacts; i += 200) {
      const items = Array.from({ length: Math.min(200, contacts - i) }, (_, j) => ({ email: `c${i + j}-${this.tag}@export.example`, first_name: `C${i + j}` }));
      this.contactIds.push(...(await this.batch('/contacts/batch', items)));
    }
    for (let i = 0; i < deals; i += 200) {
      const items = Array.from({ length: Math.min(200, deals - i) }, (_, j) => ({
        name: `D${i + j}`,
        pipeline_id: this.pipelineId,
        stage_id: this.stageIds[0],
        value: i + j,
        contact_id: this.contactIds[(i + j) % this.contactIds.length],
      }));
      this.dealIds.push(...(await this.batch('/deals/batch', items)));
    }
  }

  /** A deal in the seeded pipeline's first stage. */
  dealBody(name: string, value?: number): Record<string, unknown> {
    return { name, pipeline_id: this.pipelineId, stage_id: this.stageIds[0], ...(value === undefined ? {} : { value }) };
  }

  /** `whileRunning` is called with the export's id once it is started, and awaited before the export is read. */
  async run(whileRunning?: (exportId: string) => Promise<void>): Promise<HandoffResult> {
    let writing = true;
    let writes = 0;
    const writer = this.write(
      () => writing,
      () => writes++,
    );
    let done: ExportView;
    let writesDuring: number;
    try {
      await eventually(async () => (writes >= 30 ? true : undefined));
      const started = await this.api.post('/exports', { objects: ['contacts', 'deals'] });
      expect(started.status).toBe(202);
      expect(started.body.data).toMatchObject({ status: 'queued', objects: ['contacts', 'deals'], format: 'ndjson', as_of: null, files: [] });
      const atStart = writes;
      await whileRunning?.(started.body.data.id);
      done = await finishedExport(this.api, started.body.data.id);
      writesDuring = writes - atStart;
      // Sixty more after it finished, so the log after as_of holds changes the files cannot.
      await eventually(async () => (writes >= atStart + writesDuring + 60 ? true : undefined), 600_000);
    } catch (err) {
      // The writer stops with the scenario, so it cannot write into a stack being torn down.
      writing = false;
      await writer.catch(() => undefined);
      throw err;
    }
    writing = false;
    await writer;
    if (done.status !== 'completed') return { done, copy: { contacts: new Map(), deals: new Map() }, contacts: new Map(), deals: new Map(), writesDuring };

    const copy: Copy = { contacts: new Map(), deals: new Map() };
    for (const file of done.files) {
      for (const row of await downloadRows(this.api, done.id, file)) copy[file.object as keyof Copy].set(row.id, row);
    }
    expect(done.progress).toEqual({
      contacts: expect.objectContaining({ rows: copy.contacts.size }),
      deals: expect.objectContaining({ rows: copy.deals.size }),
    });
    // Markers through each service: once both are in the log, every earlier change of either is too.
    const contactMarker = (await this.api.post('/contacts', { email: `marker-${this.tag}-${writes}@export.example` })).body.data.id;
    const dealMarker = (await this.api.post('/deals', this.dealBody(`Marker ${this.tag}`))).body.data.id;
    const events = await this.eventsUntil(done.as_of!, [(e) => e.data.contact_id === contactMarker, (e) => e.data.deal_id === dealMarker]);
    for (const e of events) applyLogged(copy, e);
    const [contacts, deals] = [await queryAll(this.api, '/contacts/query'), await queryAll(this.api, '/deals/query')];
    return { done, copy, contacts, deals, writesDuring };
  }

  private async batch(path: string, items: unknown[]): Promise<string[]> {
    // Each batch under its own key, sent again after a 503 or a 409 (first attempt still running), as docs/api.md tells a client.
    const key = `${this.tag}-${path}-${this.contactIds.length}-${this.dealIds.length}`;
    const res = await eventually(async () => {
      const answer = await this.api.post(path, { operation: 'create', items }, { headers: { 'Idempotency-Key': key } });
      return answer.status === 503 || answer.status === 409 ? undefined : answer;
    }, 600_000);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text}`);
    return res.body.data.map((r: { status: number; data?: { id: string }; error?: unknown }) => {
      if (!r.data) throw new Error(`${path} item failed: ${JSON.stringify(r.error)}`);
      return r.data.id;
    });
  }

  /** One change at a time, cycling through create, update and delete of contacts and deals. */
  private async write(going: () => boolean, wrote: () => void): Promise<void> {
    const pick = (ids: string[]) => ids.splice(Math.floor(Math.random() * ids.length), 1)[0];
    const any = (ids: string[]) => ids[Math.floor(Math.random() * ids.length)];
    for (let n = 0; going(); n++) {
      const step = n % 6;
      let res;
      if (step === 0) {
        res = await this.api.post('/contacts', { email: `w${n}-${this.tag}@export.example`, first_name: `W${n}` });
        if (res.status === 201) this.contactIds.push(res.body.data.id);
      } else if (step === 1) {
        res = await this.api.patch(`/contacts/${any(this.contactIds)}`, { first_name: `U${n}`, stage: n % 2 ? 'lead' : 'customer' });
      } else if (step === 2) {
        res = await this.api.delete(`/contacts/${pick(this.contactIds)}`);
      } else if (step === 3) {
        res = await this.api.post('/deals', this.dealBody(`W${n}`, n));
        if (res.status === 201) this.dealIds.push(res.body.data.id);
      } else if (step === 4) {
        res = await this.api.patch(`/deals/${any(this.dealIds)}`, { name: `U${n}`, value: n, stage_id: this.stageIds[n % 2] });
      } else {
        res = await this.api.delete(`/deals/${pick(this.dealIds)}`);
      }
      // A record deleted by an earlier step may be updated (404): that is a client's race, not a failure.
      if (res.status >= 500) throw new Error(`write answered ${res.status}: ${res.text}`);
      wrote();
    }
  }

  /** The log from `cursor` until every marker is in it (each service logs its events in commit order). */
  private async eventsUntil(cursor: string, markers: Array<(e: LoggedEvent) => boolean>): Promise<LoggedEvent[]> {
    const events: LoggedEvent[] = [];
    let at = cursor;
    return eventually(async () => {
      for (;;) {
        const res = await this.api.get(`/events?limit=200&cursor=${encodeURIComponent(at)}`);
        if (res.status !== 200) throw new Error(`GET /events answered ${res.status}: ${res.text}`);
        events.push(...res.body.data);
        at = res.body.next_cursor;
        if (markers.every((m) => events.some(m))) return events;
        if (!res.body.has_more) return undefined;
      }
    }, 300_000);
  }
}

/** A copy's rows without the version the rule needed: what the queries answer. */
export function withoutVersions(rows: Map<string, Row>): Map<string, Row> {
  return new Map([...rows].map(([id, { version: _version, ...row }]) => [id, row]));
}

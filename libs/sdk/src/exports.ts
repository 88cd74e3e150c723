import type { Client } from 'openapi-fetch';
import { answerError } from './answer-error';
import type { components, paths } from './schema';

type CrmClient = Client<paths>;
type Schemas = components['schemas'];

/** A record of an export's files: `id`, its fields, and the `version` the handoff rule compares. */
export type ExportedRecord = { id: string; version: number } & Record<string, unknown>;
/** A copy of the exported objects: each object's records by id. */
export type RecordCopy = Record<string, Map<string, ExportedRecord>>;
/** An event of the log as the handoff rule reads it. */
export type LogEvent = Schemas['EventView'];

const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export interface ExportOptions {
  /** How long to wait between looks at a running export; 1 s by default. */
  pollMs?: number;
  signal?: AbortSignal;
}

/**
 * Runs an export (docs/exports.md) and reads its files into a copy: starts it, waits for it to complete,
 * downloads each file (NDJSON, gzip or not) and answers the copy with the export, whose `as_of` is where
 * `followLog` goes on. A failed export throws with its error; start a new one.
 */
export async function exportRecords(
  client: CrmClient,
  request: Omit<Schemas['CreateExportDto'], 'format'>,
  options: ExportOptions = {},
): Promise<{ export: Schemas['ExportView']; copy: RecordCopy }> {
  const started = await client.POST('/exports', { body: { ...request, format: 'ndjson' } });
  if (!started.data) throw answerError('POST /exports', started.response, started.error);
  let current = started.data.data;
  while (current.status === 'queued' || current.status === 'running') {
    await pause(options.pollMs ?? 1000, options.signal);
    const polled = await client.GET('/exports/{id}', { params: { path: { id: current.id } } });
    if (!polled.data) throw answerError('GET /exports/:id', polled.response, polled.error);
    current = polled.data.data;
  }
  if (current.status !== 'completed') throw Object.assign(new Error(`export ${current.id} failed: ${current.error?.message ?? ''}`), { export: current });
  const copy: RecordCopy = Object.fromEntries(current.objects.map((object) => [object, new Map<string, ExportedRecord>()]));
  for (const file of current.files) {
    const got = await client.GET('/exports/{id}/files/{name}', { params: { path: { id: current.id, name: file.name } }, parseAs: 'stream' });
    if (!got.response.ok || !got.response.body) throw answerError(`GET /exports/:id/files/${file.name}`, got.response, undefined);
    const bytes = file.name.endsWith('.gz') ? got.response.body.pipeThrough(new DecompressionStream('gzip')) : got.response.body;
    const text = await new Response(bytes).text();
    for (const line of text.split('\n')) {
      if (line) {
        const record = JSON.parse(line) as ExportedRecord;
        copy[file.object].set(record.id, record);
      }
    }
  }
  return { export: current, copy };
}

/**
 * The handoff rule of docs/exports.md: applies one event of the log to the copy, unless the copy already
 * holds a newer version of its record; a delete removes. Events of objects the copy does not hold, and
 * those that change no record's fields (associations, stage moves: their `updated` event says it), pass.
 */
export function applyEvent(copy: RecordCopy, event: LogEvent): void {
  const [noun, action] = event.type.split('.');
  const data = event.data as Record<string, any>;
  const rows = copy[`${noun}s`];
  const id = data[`${noun}_id`] as string;
  if (!rows) return;
  if (action === 'deleted') return void rows.delete(id);
  if (action !== 'created' && action !== 'updated') return;
  if ((rows.get(id)?.version ?? -1) > data.version) return;
  rows.set(id, { ...(data.record ?? { ...rows.get(id), ...data.current }), version: data.version });
}

/**
 * The log from `cursor` on (an export's `as_of`), a page at a time in log order, each page with the cursor
 * after it: apply a page's events, then store its cursor, and a restart goes on from there. Polls
 * (`pollMs`, 1 s by default) when it has caught up, so it ends only when `signal` aborts.
 */
export async function* followLog(client: CrmClient, cursor: string, options: ExportOptions = {}): AsyncGenerator<{ events: LogEvent[]; cursor: string }> {
  let at = cursor;
  for (;;) {
    const page = await client.GET('/events', { params: { query: { cursor: at, limit: 200 } } });
    if (!page.data) throw answerError('GET /events', page.response, page.error);
    // The log always answers a cursor to go on from, even on its last page.
    at = page.data.next_cursor ?? at;
    if (page.data.data.length) yield { events: page.data.data, cursor: at };
    if (!page.data.has_more) await pause(options.pollMs ?? 1000, options.signal);
  }
}

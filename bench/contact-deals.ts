import { DEFAULT_PAGE_SIZE } from '@crm/common';
import { Client } from 'pg';
import { join } from 'path';
import { BenchStack, load, machine, percentile, Row, runBenchmark, withBenchStack } from './bench-stack';

/**
 * `npm run bench:associations`: listing the deals of one contact associated with 1,000 of them
 * (GET /contacts/:id/deals), against the two statements the deals service runs for that page sent straight
 * to its PostgreSQL schema, on the same stack in the same run: the route's own cost over the database's.
 */
const ROOT = join(__dirname, '..', '..');
/** Deals associated with the contact: half as their primary contact, half through /deals/:id/contacts. */
const ASSOCIATED = 1000;
/** Deals of the same pipeline without the contact, so the join has rows to leave out. */
const NOISE = 2000;
/** The most one batch may hold (docs/batch.md). */
const BATCH_SIZE = 200;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** Sequential requests and statement pairs before each timed run, so neither side pays for a cold cache or plan. */
const WARMUP = 50;
/** Contacts deleted one at a time to time how soon their deal associations follow. */
const DELETIONS = 20;

interface DealItem {
  id: string;
  association?: { role?: unknown; is_primary?: unknown };
}

interface ContactDealsPage {
  data: DealItem[];
  has_more: boolean;
  next_cursor?: string;
}

interface SqlRow {
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}x`;

/** The page's statements as ContactLinksService.listForContact runs them: the keyset page, then the associations of its deals. */
async function listDirect(db: Client, contactId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT d.* FROM deals d INNER JOIN deal_contacts dc ON dc.deal_id = d.id AND dc.contact_id = $1 ORDER BY d.id ASC LIMIT ${limit + 1}`,
    [contactId],
  );
  const ids = rows.map((r) => r.id);
  if (ids.length) await db.query(`SELECT deal_id, role, is_primary FROM deal_contacts WHERE contact_id = $1 AND deal_id = ANY($2::text[])`, [contactId, ids]);
  return ids;
}

/** One client, one statement pair after another, for as long as a route row runs. */
async function measureDirect(db: Client, contactId: string, limit: number): Promise<SqlRow> {
  for (let i = 0; i < WARMUP; i++) await listDirect(db, contactId, limit);
  const times: number[] = [];
  const started = performance.now();
  const until = started + DURATION_S * 1000;
  while (performance.now() < until) {
    const t = performance.now();
    await listDirect(db, contactId, limit);
    times.push(performance.now() - t);
  }
  const elapsedS = (performance.now() - started) / 1000;
  return { requests_per_s: Math.round(times.length / elapsedS), p50_ms: percentile(times, 50), p99_ms: percentile(times, 99) };
}

async function main(): Promise<void> {
  await withBenchStack(ROOT, async (stack) => {
    const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${stack.api}${path}`, { headers });
      if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    };

    const pipeline: { id: string; stages: Array<{ id: string }> } = await stack.post('/pipelines', {
      name: 'Associations',
      stages: [
        { name: 'Open', type: 'open' },
        { name: 'Won', type: 'won' },
      ],
    });
    const stageId = pipeline.stages[0].id;
    const contact: { id: string } = await stack.post('/contacts', { email: `associations-${Date.now()}@bench.example`, first_name: 'Associations' });

    // Primary, linked and unrelated deals interleaved in creation order (ids are time-ordered), so the
    // contact's deals are spread over the whole id range the keyset walks rather than packed at one end.
    type Kind = 'primary' | 'linked' | 'noise';
    const pattern: Kind[] = ['primary', 'noise', 'noise', 'linked', 'noise', 'noise'];
    const kinds = Array.from({ length: ASSOCIATED + NOISE }, (_, i) => pattern[i % pattern.length]);
    const expected = { primary: ASSOCIATED / 2, linked: ASSOCIATED / 2, noise: NOISE };
    for (const kind of Object.keys(expected) as Kind[]) {
      const n = kinds.filter((k) => k === kind).length;
      if (n !== expected[kind]) throw new Error(`setup: ${n} ${kind} deals planned, ${expected[kind]} wanted`);
    }
    process.stderr.write(`creating ${kinds.length} deals\n`);
    const created: Array<{ id: string; kind: Kind }> = [];
    for (let start = 0; start < kinds.length; start += BATCH_SIZE) {
      const chunk = kinds.slice(start, start + BATCH_SIZE);
      const items = chunk.map((kind, i) => ({
        name: `Deal ${start + i}`,
        pipeline_id: pipeline.id,
        stage_id: stageId,
        value: 1000 * ((start + i) % 50),
        ...(kind === 'primary' ? { contact_id: contact.id } : {}),
      }));
      const res = await fetch(`${stack.api}/deals/batch`, { method: 'POST', headers, body: JSON.stringify({ operation: 'create', items }) });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST /deals/batch: ${res.status} ${text.slice(0, 500)}`);
      const results = (JSON.parse(text) as { data: Array<{ index: number; status: number; data?: { id?: string }; error?: unknown }> }).data;
      if (results.length !== items.length) throw new Error(`POST /deals/batch: ${results.length} results for ${items.length} items`);
      for (const result of results) {
        if (result.status !== 201 || !result.data?.id) {
          throw new Error(`POST /deals/batch item ${start + result.index}: ${result.status} ${JSON.stringify(result.error ?? result.data)}`);
        }
        created[start + result.index] = { id: result.data.id, kind: chunk[result.index] };
      }
    }
    const linked = created.filter((d) => d.kind === 'linked');
    process.stderr.write(`associating ${linked.length} deals\n`);
    for (const deal of linked) {
      const res = await fetch(`${stack.api}/deals/${deal.id}/contacts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ contact_id: contact.id, role: 'user' }),
      });
      if (res.status !== 201) throw new Error(`POST /deals/${deal.id}/contacts: ${res.status} ${await res.text()}`);
    }

    // A list that returned too few, too many or unlabelled deals would make its timings meaningless.
    const seen = new Map<string, { role: unknown; is_primary: unknown }>();
    let pages = 0;
    let cursor: string | undefined;
    do {
      const page = await get<ContactDealsPage>(`/contacts/${contact.id}/deals?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      pages += 1;
      for (const item of page.data) {
        const a = item.association;
        if (!a || typeof a.is_primary !== 'boolean' || !(a.role === null || typeof a.role === 'string')) {
          throw new Error(`GET /contacts/:id/deals: deal ${item.id} has no association {role, is_primary}: ${JSON.stringify(a)}`);
        }
        if (seen.has(item.id)) throw new Error(`GET /contacts/:id/deals: deal ${item.id} listed twice`);
        seen.set(item.id, { role: a.role, is_primary: a.is_primary });
      }
      cursor = page.has_more ? page.next_cursor : undefined;
      if (page.has_more && !cursor) throw new Error('GET /contacts/:id/deals: has_more without next_cursor');
      if (pages > ASSOCIATED) throw new Error('GET /contacts/:id/deals: paging does not end');
    } while (cursor);
    if (seen.size !== ASSOCIATED) throw new Error(`GET /contacts/:id/deals: ${seen.size} deals over ${pages} pages, ${ASSOCIATED} expected`);
    const wrong = created.filter((d) => {
      const a = seen.get(d.id);
      if (d.kind === 'noise') return a !== undefined;
      return d.kind === 'primary' ? a?.is_primary !== true : a?.role !== 'user' || a.is_primary !== false;
    });
    if (wrong.length) {
      const [first] = wrong;
      throw new Error(
        `GET /contacts/:id/deals: ${wrong.length} deals listed wrongly or missing, e.g. ${first.id} (${first.kind}): ${JSON.stringify(seen.get(first.id))}`,
      );
    }

    // The services' own connection settings (libs/common database.ts), so the unqualified names resolve to the deals schema.
    const db = new Client({ connectionString: stack.databaseUrl, options: '-c search_path=deals,public' });
    await db.connect();
    try {
      // Statistics as a table that has lived a while has them, whether or not autovacuum got to the new rows yet;
      // the route and the direct statements plan against the same ones.
      await db.query('ANALYZE deals');
      await db.query('ANALYZE deal_contacts');

      const base = `${stack.api}/contacts/${contact.id}/deals`;
      // One client reading, as someone looking into a record does: the latency of the read itself, not of
      // a queue of 32 connections in front of it.
      const one = { connections: 1 };
      const scenarios = [
        { label: `GET /contacts/:id/deals (default limit, ${DEFAULT_PAGE_SIZE})`, query: '', limit: DEFAULT_PAGE_SIZE },
        { label: 'GET /contacts/:id/deals?limit=100', query: '?limit=100', limit: 100 },
      ];
      const rows: Array<{ label: string; route: Row; sql: SqlRow }> = [];
      for (const s of scenarios) {
        const page = await get<ContactDealsPage>(`/contacts/${contact.id}/deals${s.query}`);
        const direct = (await listDirect(db, contact.id, s.limit)).slice(0, s.limit);
        if (page.data.length !== s.limit || page.data.map((d) => d.id).join() !== direct.join()) {
          throw new Error(`${s.label}: the route's ${page.data.length} ids differ from the direct SQL's ${direct.length}`);
        }
        process.stderr.write(`measuring ${s.label}\n`);
        for (let i = 0; i < WARMUP; i++) await get(`/contacts/${contact.id}/deals${s.query}`);
        const route = await load(s.label, `${base}${s.query}`, stack.key, one, '', DURATION_S);
        const sql = await measureDirect(db, contact.id, s.limit);
        rows.push({ label: s.label, route, sql });
      }

      const cleanup = await deletionLag(stack, get, pipeline.id, pipeline.stages[0].id);

      const lines = [
        `Run ${new Date().toISOString()} on ${machine()}; one contact associated with ${ASSOCIATED} deals (${ASSOCIATED / 2} as primary contact, ${ASSOCIATED / 2} with role 'user'), ` +
          `among ${ASSOCIATED + NOISE} deals; one connection, ${DURATION_S} s per side and row, after ${WARMUP} warm-up reads each. ` +
          `Route: through the gateway with an API key. SQL: the deals service's two statements for the page (keyset page with LIMIT limit+1, then its associations), ` +
          `one after the other on one \`pg\` client under the service's search_path.`,
        '',
        '| Scenario | route req/s | route p50 ms | route p99 ms | errors | SQL pages/s | SQL p50 ms | SQL p99 ms | p99 route/SQL |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
        ...rows.map(
          (r) =>
            `| ${r.label} | ${r.route.requests_per_s} | ${ms(r.route.p50_ms)} | ${ms(r.route.p99_ms)} | ${r.route.errors} | ` +
            `${r.sql.requests_per_s} | ${ms(r.sql.p50_ms)} | ${ms(r.sql.p99_ms)} | ${ratio(r.route.p99_ms, r.sql.p99_ms)} |`,
        ),
      ];
      lines.push(
        '',
        `Deleting a contact associated with a deal, ${cleanup.length} times one after another: from its contact.deleted to the deals service's deal.contact_removed ` +
          `(the occurred_at of each, both services on this machine): p50 ${ms(percentile(cleanup, 50))} ms, p99 ${ms(percentile(cleanup, 99))} ms, max ${ms(Math.max(...cleanup))} ms.`,
      );
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      await db.end();
    }
  });
}

interface LoggedEvent {
  type: string;
  occurred_at: string;
  data: Record<string, unknown>;
}

/**
 * How soon a contact's deletion reaches its deal associations, which the deals service removes when it
 * consumes contact.deleted: the gap between the two events' instants, for contacts deleted one at a time.
 */
async function deletionLag(stack: BenchStack, get: <T>(path: string) => Promise<T>, pipelineId: string, stageId: string): Promise<number[]> {
  const gaps: number[] = [];
  for (let n = 0; n < DELETIONS; n++) {
    const person: { id: string } = await stack.post('/contacts', { email: `leaving-${n}-${Date.now()}@bench.example` });
    const deal: { id: string } = await stack.post('/deals', { name: `Leaving ${n}`, pipeline_id: pipelineId, stage_id: stageId });
    await stack.post(`/deals/${deal.id}/contacts`, { contact_id: person.id, role: 'user' });
    const res = await fetch(`${stack.api}/contacts/${person.id}`, { method: 'DELETE', headers: { 'X-Api-Key': stack.key } });
    if (res.status !== 204) throw new Error(`DELETE contact: ${res.status}`);
    let deleted: LoggedEvent | undefined;
    let removed: LoggedEvent | undefined;
    // Polls the log until both events are there: the signal, not an assumed delay.
    for (let cursor: string | undefined; !(deleted && removed);) {
      const page: { data: LoggedEvent[]; next_cursor?: string } = await get(
        `/events?type=contact.deleted,deal.contact_removed&limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      );
      deleted ??= page.data.find((e) => e.type === 'contact.deleted' && e.data.contact_id === person.id);
      removed ??= page.data.find((e) => e.type === 'deal.contact_removed' && e.data.contact_id === person.id);
      if (page.data.length === 200 && page.next_cursor) cursor = page.next_cursor;
      else await new Promise((resolve) => setTimeout(resolve, 5));
    }
    gaps.push(Date.parse(removed.occurred_at) - Date.parse(deleted.occurred_at));
  }
  return gaps;
}

runBenchmark(main);

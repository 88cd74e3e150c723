import { compileEventFilter } from '@crm/common';
import { Client } from 'pg';
import { filterPrescreen } from '../src/log/filter-prescreen';

/**
 * The pre-screen (filter-prescreen.ts) must never drop an event the evaluator keeps: every filter below runs
 * in PostgreSQL over events shaped to trip it (membership in an array, paths through arrays of objects,
 * missing paths and nulls, odd keys), and each event the evaluator keeps must pass the SQL.
 */
const events = [
  { type: 'deal.updated', via: 'api', request_id: 'r1', actor: { type: 'api_key', id: 'k1' }, data: { changed: ['stage', 'name'], current: { stage: 'won' } } },
  { type: 'deal.updated', via: 'import', request_id: null, actor: null, data: { changed: 'stage', current: { stage: 'open' } } },
  { type: 'deal.updated', via: null, request_id: 'r2', actor: { type: 'user', id: 'u1' }, data: { changed: ['name'], x: null } },
  { type: 'contact.updated', via: 'api', request_id: 'r1', actor: { type: 'api_key', id: 'k2' }, data: { items: [{ sku: 'a' }, { sku: 'b' }, 3] } },
  { type: 'contact.updated', via: 'mcp', request_id: null, actor: { type: 'api_key', id: 'k1' }, data: { items: [{ sku: ['a', 'c'] }], flag: [false, true] } },
  { type: 'contact.created', via: 'api', request_id: 'r3', actor: { type: 'api_key' }, data: { flag: true, 'q"k\\': 'v', current: { stage: ['won'] } } },
  { type: 'contact.created', via: 'batch', request_id: 'r4', actor: { type: 'user', id: 'k1' }, data: {} },
];

const filters: Array<{ filter: Record<string, unknown>; prescreened: boolean }> = [
  { filter: { 'data.changed': 'stage' }, prescreened: true },
  { filter: { 'data.changed': { $in: ['stage', 'other'] }, via: { $ne: 'import' } }, prescreened: true },
  { filter: { 'data.items.sku': 'a' }, prescreened: true },
  { filter: { 'data.items.sku': { $in: ['c'] } }, prescreened: true },
  { filter: { 'data.current.stage': 'won', type: { $in: ['deal.updated', 'contact.created'] } }, prescreened: true },
  { filter: { $and: [{ 'data.flag': true }, { 'actor.type': 'api_key' }] }, prescreened: true },
  { filter: { 'data.q"k\\': 'v' }, prescreened: true },
  { filter: { via: { $in: ['api', 'mcp'] }, request_id: 'r1', 'actor.id': 'k1' }, prescreened: true },
  // A null asks for the path to be missing or null: never pre-screened, only its neighbours are.
  { filter: { 'data.x': null, type: 'deal.updated' }, prescreened: true },
  { filter: { 'data.current.stage': { $in: [null, 'open'] } }, prescreened: false },
  { filter: { 'actor.id': { $eq: null } }, prescreened: false },
  { filter: { $or: [{ 'data.changed': 'stage' }, { via: 'batch' }] }, prescreened: false },
  { filter: { $not: { 'data.changed': 'name' } }, prescreened: false },
  { filter: { 'data.changed': { $nin: ['name'] }, 'data.current.stage': { $gt: 'a' } }, prescreened: false },
];

describe('filterPrescreen', () => {
  let pg: Client;
  beforeAll(async () => {
    const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
    url.pathname = '/postgres';
    pg = new Client({ connectionString: url.toString() });
    await pg.connect();
    await pg.query(`CREATE TEMP TABLE events (n int, type text, via text, request_id text, actor jsonb, data jsonb)`);
    for (const [n, e] of events.entries()) {
      await pg.query(`INSERT INTO events VALUES ($1, $2, $3, $4, $5, $6)`, [
        n,
        e.type,
        e.via,
        e.request_id,
        e.actor && JSON.stringify(e.actor),
        JSON.stringify(e.data),
      ]);
    }
  });
  afterAll(() => pg.end());

  it.each(filters)('keeps every event the evaluator keeps: $filter', async ({ filter, prescreened }) => {
    const params: unknown[] = [];
    const conditions = filterPrescreen(filter, (v) => `$${params.push(v)}`);
    expect(conditions.length > 0).toBe(prescreened);
    const { rows } = await pg.query(`SELECT n FROM events WHERE ${['true', ...conditions].join(' AND ')} ORDER BY n`, params);
    const passed = rows.map((r: { n: number }) => r.n);
    const holds = compileEventFilter(filter);
    const kept = events.flatMap((e, n) => (holds(e) ? [n] : []));
    expect(kept.length).toBeGreaterThan(0);
    expect(passed).toEqual(expect.arrayContaining(kept));
    // Not vacuous: a pre-screened filter drops some of the events the evaluator drops.
    if (prescreened) expect(passed.length).toBeLessThan(events.length);
  });
});

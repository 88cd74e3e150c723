import { createHash } from 'crypto';
import { createServer, IncomingMessage, ServerResponse } from 'http';
import { Pool, PoolClient } from 'pg';
import { ulid } from 'ulid';

/**
 * The bare baseline for `npm run bench`: one plain Node `http` server with one `pg` pool, answering the
 * benchmarked routes with the SQL the stack runs for them and nothing else (no framework, no NATS, no
 * validation, no logging, no rate limit). It runs on the stack's database: reads use the stack's own
 * tables; writes go to copies of the written tables in a `bench_bare` schema (same columns, indexes and
 * checks), so the stack's outbox relays never see them. Every request first looks the API key up by its
 * hash, as the gateway does.
 *
 * Started by bench/run.ts with DATABASE_URL and PORT; prints `ready` on stdout when listening.
 */
const CONTACT_SEARCH_TEXT = `(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || E'\\n' || email)`;
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.BARE_POOL_SIZE ?? 10) });

async function prepare(): Promise<void> {
  await pool.query(`
    CREATE SCHEMA IF NOT EXISTS bench_bare;
    CREATE TABLE IF NOT EXISTS bench_bare.contacts (LIKE contacts.contacts INCLUDING ALL);
    CREATE TABLE IF NOT EXISTS bench_bare.contacts_outbox (LIKE contacts.outbox INCLUDING ALL);
    CREATE TABLE IF NOT EXISTS bench_bare.deals (LIKE deals.deals INCLUDING ALL);
    CREATE TABLE IF NOT EXISTS bench_bare.stage_history (LIKE deals.stage_history INCLUDING ALL);
    CREATE TABLE IF NOT EXISTS bench_bare.deals_outbox (LIKE deals.outbox INCLUDING ALL);
  `);
}

async function authorised(req: IncomingMessage): Promise<boolean> {
  const key = req.headers['x-api-key'];
  if (typeof key !== 'string') return false;
  const hash = createHash('sha256').update(key, 'utf8').digest('hex');
  const { rows } = await pool.query(
    `SELECT id, scope, key_hash, revoked_at IS NOT NULL AS revoked, coalesce(expires_at <= now(), false) AS expired
     FROM gateway.api_keys WHERE key_hash = $1`,
    [hash],
  );
  return rows.length === 1 && !rows[0].revoked && !rows[0].expired;
}

async function body(req: IncomingMessage): Promise<any> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

async function transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function outbox(client: PoolClient, table: string, type: string, data: object): Promise<void> {
  const event = { id: `evt_${ulid().toLowerCase()}`, type, occurred_at: new Date().toISOString(), data };
  // The stack's outbox append: the row and the relay's notification in one statement.
  await client.query(`WITH appended AS (INSERT INTO bench_bare.${table} (event_id, type, payload) VALUES ($1, $2, $3)) SELECT pg_notify($4, '')`, [
    event.id,
    type,
    JSON.stringify(event),
    `bench_bare_${table}`,
  ]);
}

/** Moves a deal to a stage of its pipeline: the row, its history and the event, in one transaction. */
async function moveDeal(dealId: string, stageId: string): Promise<unknown> {
  return transaction(async (client) => {
    const { rows: deals } = await client.query(`SELECT * FROM bench_bare.deals WHERE id = $1 FOR UPDATE`, [dealId]);
    if (!deals.length) return undefined;
    const { rows: stages } = await client.query(`SELECT id, type FROM deals.stages WHERE pipeline_id = $1 AND id = $2`, [deals[0].pipeline_id, stageId]);
    if (!stages.length) return undefined;
    const { rows } = await client.query(
      `UPDATE bench_bare.deals SET stage_id = $2, status = $3, stage_entered_at = now(), updated_at = now() WHERE id = $1 RETURNING *`,
      [dealId, stageId, stages[0].type],
    );
    await client.query(`INSERT INTO bench_bare.stage_history (id, deal_id, from_stage_id, to_stage_id, changed_by) VALUES ($1, $2, $3, $4, 'api_key')`, [
      `sth_${ulid().toLowerCase()}`,
      dealId,
      deals[0].stage_id,
      stageId,
    ]);
    await outbox(client, 'deals_outbox', 'deal.stage_changed', { deal_id: dealId, from_stage_id: deals[0].stage_id, to_stage_id: stageId });
    return rows[0];
  });
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!(await authorised(req))) return send(res, 401, { error: { code: 'unauthorized', message: 'Invalid API key.' } });
  const url = new URL(req.url ?? '/', 'http://bare');
  const path = url.pathname.split('/').filter(Boolean);
  const limit = Number(url.searchParams.get('limit') ?? 50);

  if (req.method === 'GET' && path[0] === 'contacts' && path.length === 2) {
    const { rows } = await pool.query(`SELECT * FROM contacts.contacts WHERE id = $1`, [path[1]]);
    return rows.length ? send(res, 200, { data: rows[0] }) : send(res, 404, { error: { code: 'not_found', message: 'No such contact.' } });
  }
  if (req.method === 'GET' && path[0] === 'contacts' && path.length === 1) {
    const search = url.searchParams.get('search');
    const { rows } = search
      ? await pool.query(`SELECT * FROM contacts.contacts WHERE ${CONTACT_SEARCH_TEXT} ILIKE $1 ORDER BY id LIMIT $2`, [`%${search}%`, limit + 1])
      : await pool.query(`SELECT * FROM contacts.contacts ORDER BY id LIMIT $1`, [limit + 1]);
    return send(res, 200, { data: rows.slice(0, limit), has_more: rows.length > limit });
  }
  if (req.method === 'GET' && path[0] === 'events' && path.length === 1) {
    const { rows } = await pool.query(`SELECT * FROM events.events ORDER BY position LIMIT $1`, [limit + 1]);
    return send(res, 200, { data: rows.slice(0, limit), has_more: rows.length > limit });
  }
  if (req.method === 'POST' && path[0] === 'contacts' && path.length === 1) {
    const input = await body(req);
    const contact = await transaction(async (client) => {
      const { rows } = await client.query(`INSERT INTO bench_bare.contacts (id, email, first_name, stage) VALUES ($1, $2, $3, $4) RETURNING *`, [
        `cont_${ulid().toLowerCase()}`,
        input.email,
        input.first_name ?? null,
        input.stage ?? null,
      ]);
      await outbox(client, 'contacts_outbox', 'contact.created', { contact_id: rows[0].id, email: rows[0].email });
      return rows[0];
    });
    return send(res, 201, { data: contact });
  }
  if (req.method === 'POST' && path[0] === 'deals' && path.length === 1) {
    const input = await body(req);
    // The stack asks the contacts service whether the contact exists before it writes.
    if (input.contact_id && !(await pool.query(`SELECT 1 FROM contacts.contacts WHERE id = $1`, [input.contact_id])).rows.length) {
      return send(res, 422, { error: { code: 'validation_failed', message: 'No such contact.' } });
    }
    const deal = await transaction(async (client) => {
      const { rows: stages } = await client.query(`SELECT id, type FROM deals.stages WHERE pipeline_id = $1 AND id = $2`, [input.pipeline_id, input.stage_id]);
      if (!stages.length) return undefined;
      const { rows } = await client.query(
        `INSERT INTO bench_bare.deals (id, name, pipeline_id, stage_id, contact_id, value, status) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
        [`deal_${ulid().toLowerCase()}`, input.name, input.pipeline_id, input.stage_id, input.contact_id ?? null, input.value ?? 0, stages[0].type],
      );
      await client.query(`INSERT INTO bench_bare.stage_history (id, deal_id, to_stage_id, changed_by) VALUES ($1, $2, $3, 'api_key')`, [
        `sth_${ulid().toLowerCase()}`,
        rows[0].id,
        input.stage_id,
      ]);
      await outbox(client, 'deals_outbox', 'deal.created', { deal_id: rows[0].id });
      return rows[0];
    });
    return deal ? send(res, 201, { data: deal }) : send(res, 422, { error: { code: 'validation_failed', message: 'No such stage.' } });
  }
  if (req.method === 'POST' && path[0] === 'deals' && path.length === 3 && path[2] === 'stage') {
    const moved = await moveDeal(path[1], (await body(req)).stage_id);
    return moved ? send(res, 200, { data: moved }) : send(res, 404, { error: { code: 'not_found', message: 'No such deal or stage.' } });
  }
  send(res, 404, { error: { code: 'not_found', message: 'No such route.' } });
}

async function main(): Promise<void> {
  await prepare();
  const server = createServer((req, res) => {
    route(req, res).catch((err: Error) => send(res, 500, { error: { code: 'internal', message: err.message } }));
  });
  await new Promise<void>((r) => server.listen(Number(process.env.PORT), '127.0.0.1', r));
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => server.close(() => void pool.end()));
}

main().catch((err) => {
  process.stderr.write(`bare: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});

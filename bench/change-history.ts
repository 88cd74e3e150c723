import { Client } from 'pg';
import { join } from 'path';
import { load, machine, percentile, runBenchmark, withBenchStack } from './bench-stack';

/**
 * `npm run bench:changes`: reading one record's change history of 1,000 entries, against reading the
 * record itself on the same stack in the same run (the request path's own floor), and what the history
 * costs on disk per million entries.
 */
const ROOT = join(__dirname, '..', '..');
const ENTRIES = 1000;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** Entries copied from the real ones to measure storage at a size where page overheads no longer dominate. */
const STORAGE_SAMPLE = Number(process.env.BENCH_CHANGES_STORAGE_SAMPLE ?? 200_000);

async function main(): Promise<void> {
  await withBenchStack(ROOT, async (stack) => {
    const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
    const contact = await stack.post('/contacts', { email: `history-${Date.now()}@bench.example`, first_name: 'History', custom_fields: {} });
    process.stderr.write(`writing ${ENTRIES} entries\n`);
    for (let n = 1; n < ENTRIES; n++) {
      const body = n % 3 === 0 ? { title: `Title ${n}`, phone: `+1 555 ${n}` } : { first_name: `Name ${n}` };
      const res = await fetch(`${stack.api}/contacts/${contact.id}`, { method: 'PATCH', headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`PATCH: ${res.status} ${await res.text()}`);
    }
    const first = (await (await fetch(`${stack.api}/contacts/${contact.id}/changes?limit=100`, { headers })).json()) as { next_cursor?: string };
    let cursor: string | undefined = first.next_cursor;
    let pages = 1;
    let last = cursor;
    while (cursor) {
      const page = (await (await fetch(`${stack.api}/contacts/${contact.id}/changes?limit=100&cursor=${cursor}`, { headers })).json()) as {
        next_cursor?: string;
      };
      pages += 1;
      last = cursor;
      cursor = page.next_cursor;
    }
    process.stderr.write(`reading (${pages} pages)\n`);
    const base = `${stack.api}/contacts/${contact.id}`;
    // One client reading, as a person or an agent looking into a record does: the latency of the read
    // itself, not of a queue of 32 connections in front of it.
    const one = { connections: 1 };
    const rows = [
      await load('GET /contacts/:id (baseline)', base, stack.key, one, '', DURATION_S),
      await load('GET /contacts/:id/changes?limit=100 (first page)', `${base}/changes?limit=100`, stack.key, one, '', DURATION_S),
      await load('GET /contacts/:id/changes?limit=100 (last page)', `${base}/changes?limit=100&cursor=${last}`, stack.key, one, '', DURATION_S),
      await load('GET /contacts/:id/changes?limit=200 (first page)', `${base}/changes?limit=200`, stack.key, one, '', DURATION_S),
      await load('GET /contacts/:id/changes?field=phone&limit=100', `${base}/changes?field=phone&limit=100`, stack.key, one, '', DURATION_S),
      await load('GET /changes?record_id=…&limit=100', `${stack.api}/changes?record_id=${contact.id}&limit=100`, stack.key, one, '', DURATION_S),
    ];
    // The whole history, 1,000 entries in five pages of 200, read start to end by one client, 50 times.
    const walks: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      let cursor: string | undefined;
      do {
        const page = (await (await fetch(`${base}/changes?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers })).json()) as { next_cursor?: string };
        cursor = page.next_cursor;
      } while (cursor);
      walks.push(performance.now() - started);
    }

    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      process.stderr.write(`measuring storage\n`);
      await db.query(`SET search_path TO contacts`);
      const [{ count }] = (await db.query(`SELECT count(*)::int AS count FROM changes`)).rows;
      // Copies of the real entries under new ids, spread over records, so the indexes grow as they would.
      await db.query(
        `WITH source AS (SELECT row_number() OVER (ORDER BY id) - 1 AS n, * FROM changes)
         INSERT INTO changes (id, object, record_id, action, changed, previous, current, actor_type, actor_id, via, request_id, occurred_at)
         SELECT 'chg_' || lpad(to_hex(g), 26, '0'), c.object, 'cont_' || lpad(to_hex(g % 50000), 26, '0'), c.action, c.changed, c.previous, c.current,
                c.actor_type, c.actor_id, c.via, c.request_id || '-' || g, c.occurred_at
         FROM generate_series(1, $1) AS g JOIN source AS c ON c.n = g % $2`,
        [STORAGE_SAMPLE, count],
      );
      await db.query(`VACUUM ANALYZE changes`);
      const [size] = (await db.query(`SELECT count(*)::int AS entries, pg_table_size('changes') AS heap, pg_indexes_size('changes') AS indexes FROM changes`))
        .rows;
      const perMillion = (bytes: number) => ((Number(bytes) / size.entries) * 1e6) / 2 ** 20;
      const lines = [
        `Run ${new Date().toISOString()} on ${machine()}; one contact with ${ENTRIES} history entries (${pages} pages of 100); one connection, ${DURATION_S} s per row.`,
        '',
        '| Scenario | req/s | p50 ms | p99 ms | errors |',
        '|---|---:|---:|---:|---:|',
        ...rows.map((r) => `| ${r.scenario} | ${r.requests_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.errors} |`),
        `| all 1,000 entries, 5 pages of 200, in sequence (50 reads) | | ${percentile(walks, 50).toFixed(1)} | ${percentile(walks, 99).toFixed(1)} | |`,
        '',
        `Storage: ${size.entries} entries take ${perMillion(size.heap).toFixed(0)} MiB of table and ${perMillion(size.indexes).toFixed(0)} MiB of indexes per million entries.`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      await db.end();
    }
  });
}

runBenchmark(main);

import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { cpus, totalmem } from 'os';
import { join } from 'path';
import { Client } from 'pg';

/**
 * Contact search at a million contacts: seeds one million rows straight into the contacts table of a
 * throw-away database (seeding through the API would take an hour and is not what is measured here;
 * no events are produced for the seed), then times `GET /contacts?search=…` through the gateway, one
 * request at a time. `npm run bench:search`.
 */
const ROOT = join(__dirname, '..', '..');
const CONTACTS = Number(process.env.BENCH_CONTACTS ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_SEARCH_SAMPLES ?? 50);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await fetch(url).catch(() => undefined))?.ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} did not become healthy`);
}

async function main(): Promise<void> {
  const namespace = `benchsearch${randomBytes(3).toString('hex')}`;
  const db = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm');
  db.pathname = `/crm_${namespace}`;
  const key = `crm_live_${randomBytes(24).toString('hex').slice(0, 32)}`;
  const port = 3800 + Math.floor(Math.random() * 90);
  const env = { ...process.env, DATABASE_URL: db.toString(), CRM_NAMESPACE: namespace, CRM_BOOTSTRAP_API_KEY: key, HOST: '127.0.0.1', HEALTH_HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const children: ChildProcess[] = [];
  const start = (app: string, extra: Record<string, string>) =>
    children.push(spawn(process.execPath, [join(ROOT, 'dist', 'apps', app, 'src', 'main.js')], { env: { ...env, ...extra }, stdio: ['ignore', 'ignore', 'inherit'] }));
  const admin = new URL(db.toString());
  admin.pathname = '/postgres';
  try {
    start('contacts', { HEALTH_PORT: String(port + 1) });
    await waitFor(`http://127.0.0.1:${port + 1}/health`);
    const pg = new Client({ connectionString: db.toString() });
    await pg.connect();
    const seeded = Date.now();
    // Names from a small vocabulary with a numeric tail, as real data repeats first names but not people.
    await pg.query(
      `INSERT INTO contacts.contacts (id, email, first_name, last_name, stage)
       SELECT 'cont_' || lpad(to_hex(g), 26, '0'),
              'person' || g || '@' || (ARRAY['acme.com','globex.io','initech.net','umbrella.org'])[1 + g % 4],
              (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Margaret','Ken','Dennis','Frances'])[1 + g % 10],
              (ARRAY['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Hamilton','Thompson','Ritchie','Allen'])[1 + (g / 10) % 10] || g,
              (ARRAY['lead','prospect','customer','churned'])[1 + g % 4]
       FROM generate_series(1, $1) AS g`,
      [CONTACTS],
    );
    await pg.query(`ANALYZE contacts.contacts`);
    const seedSeconds = Math.round((Date.now() - seeded) / 1000);
    await pg.end();

    start('gateway', { PORT: String(port) });
    const api = `http://127.0.0.1:${port}`;
    await waitFor(`${api}/metrics`);
    const results: string[] = [];
    for (const [label, term] of [
      ['one person by email', `person${Math.floor(CONTACTS / 2)}@`],
      ['one person by last name', `Turing${Math.floor(CONTACTS / 300) * 100 + 22}`],
      ['a rare fragment (no match)', 'zqxv'],
      ['a common name (first page of many)', 'grace'],
    ] as const) {
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const started = performance.now();
        const res = await fetch(`${api}/contacts?search=${encodeURIComponent(term)}&limit=50`, { headers: { 'X-Api-Key': key } });
        const body = (await res.json()) as { data: unknown[] };
        times.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`search answered ${res.status}: ${JSON.stringify(body)}`);
        count = body.data.length;
      }
      results.push(`| ${label} | \`${term}\` | ${count} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} |`);
    }
    const machine = `${cpus().length} × ${cpus()[0].model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
    process.stdout.write(
      [
        `Run ${new Date().toISOString()} on ${machine}; ${CONTACTS} contacts seeded in ${seedSeconds} s; ${SAMPLES} sequential requests per search through the gateway.`,
        '',
        '| Search | term | items on page | p50 ms | p95 ms |',
        '|---|---|---:|---:|---:|',
        ...results,
        '',
      ].join('\n'),
    );
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    const pg = new Client({ connectionString: admin.toString() });
    await pg.connect();
    await pg.query(`DROP DATABASE IF EXISTS "crm_${namespace}" WITH (FORCE)`);
    await pg.end();
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});

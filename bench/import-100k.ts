import { IdPrefix, newId } from '@crm/common';
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import { Readable } from 'stream';
import { machine, rssMiB, startBenchStack } from './bench-stack';

/**
 * Imports BENCH_IMPORT_ROWS contacts (100,000 by default) from one CSV file through POST /imports of the
 * five processes built under dist/, and times the upload (streamed and staged) and the apply (batches of
 * 200 rows, each row validated and written with its contact.created event). Side by side, in the same
 * run, a bare baseline with plain `pg` writes the same rows the way the job commits them: 200 per
 * transaction, each a contact INSERT and an outbox INSERT, no validation or framework. `npm run bench:import`.
 */
const ROOT = join(__dirname, '..', '..');
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const BATCH = 200;

function csvFile(dir: string, domain: string): string {
  const file = join(dir, `contacts-${domain}.csv`);
  const lines = ['email,first_name,last_name,stage,source'];
  for (let i = 0; i < ROWS; i++) lines.push(`person${i}@${domain},First${i},Last${i},lead,referral`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function bare(databaseUrl: string): Promise<number> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    await pg.query(`CREATE SCHEMA IF NOT EXISTS bench_bare`);
    await pg.query(`DROP TABLE IF EXISTS bench_bare.contacts, bench_bare.outbox`);
    await pg.query(`CREATE TABLE bench_bare.contacts (LIKE contacts.contacts INCLUDING ALL)`);
    await pg.query(`CREATE TABLE bench_bare.outbox (LIKE contacts.outbox INCLUDING ALL)`);
    const started = performance.now();
    for (let first = 0; first < ROWS; first += BATCH) {
      await pg.query('BEGIN');
      for (let i = first; i < Math.min(first + BATCH, ROWS); i++) {
        const id = newId(IdPrefix.Contact);
        await pg.query(
          `INSERT INTO bench_bare.contacts (id, email, first_name, last_name, stage, source, metadata, custom_fields) VALUES ($1, $2, $3, $4, 'lead', 'referral', '{}', '{}')`,
          [id, `person${i}@bare.bench`, `First${i}`, `Last${i}`],
        );
        await pg.query(`INSERT INTO bench_bare.outbox (event_id, type, payload) VALUES ($1, 'contact.created', $2)`, [
          newId(IdPrefix.Event),
          JSON.stringify({ contact_id: id, email: `person${i}@bare.bench` }),
        ]);
      }
      await pg.query(`SELECT pg_notify('bench_bare', '')`);
      await pg.query('COMMIT');
    }
    return performance.now() - started;
  } finally {
    await pg.query(`DROP SCHEMA IF EXISTS bench_bare CASCADE`).catch(() => undefined);
    await pg.end();
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-import-'));
  const stack = await startBenchStack(ROOT);
  try {
    const file = csvFile(dir, 'import.bench');
    const started = performance.now();
    const res = await fetch(`${stack.api}/imports?object=contacts`, {
      method: 'POST',
      headers: { 'X-Api-Key': stack.key, 'Content-Type': 'text/csv' },
      body: Readable.toWeb(createReadStream(file)) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    const accepted = (await res.json()) as { data: { id: string } };
    if (res.status !== 202) throw new Error(`POST /imports: ${res.status} ${JSON.stringify(accepted)}`);
    const uploaded = performance.now() - started;
    let job: { status: string; counts: Record<string, number> };
    let peakGateway = 0;
    let peakContacts = 0;
    for (;;) {
      job = ((await (await fetch(`${stack.api}/imports/${accepted.data.id}`, { headers: { 'X-Api-Key': stack.key } })).json()) as { data: typeof job }).data;
      peakGateway = Math.max(peakGateway, rssMiB(stack.children.gateway.pid!));
      peakContacts = Math.max(peakContacts, rssMiB(stack.children.contacts.pid!));
      if (job.status === 'completed' || job.status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const total = performance.now() - started;
    if (job.status !== 'completed' || job.counts.created !== ROWS) throw new Error(`import ended ${job.status}: ${JSON.stringify(job.counts)}`);
    const bareMs = await bare(stack.databaseUrl);

    const mb = (statSync(file).size / 1024 / 1024).toFixed(1);
    process.stdout.write(`${new Date().toISOString()} — ${machine()} — ${ROWS} contacts, ${mb} MB of CSV\n\n`);
    process.stdout.write(`| | seconds | rows/s |\n|---|---:|---:|\n`);
    process.stdout.write(`| upload (streamed, parsed, staged; answered 202) | ${(uploaded / 1000).toFixed(1)} | ${Math.round(ROWS / (uploaded / 1000))} |\n`);
    process.stdout.write(`| apply (202 to completed) | ${((total - uploaded) / 1000).toFixed(1)} | ${Math.round(ROWS / ((total - uploaded) / 1000))} |\n`);
    process.stdout.write(`| whole import | ${(total / 1000).toFixed(1)} | ${Math.round(ROWS / (total / 1000))} |\n`);
    process.stdout.write(
      `| bare pg: same rows + outbox rows, ${BATCH} per transaction | ${(bareMs / 1000).toFixed(1)} | ${Math.round(ROWS / (bareMs / 1000))} |\n\n`,
    );
    process.stdout.write(
      `Whole import ÷ bare: ${(total / bareMs).toFixed(2)}x. Peak resident memory while importing: gateway ${peakGateway} MiB, contacts ${peakContacts} MiB.\n`,
    );
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

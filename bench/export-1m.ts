import { spawn } from 'child_process';
import { createHash } from 'crypto';
import { loadavg } from 'os';
import { join } from 'path';
import { BenchApp, BenchStack, machine, rssMiB, runBenchmark } from './bench-stack';
import { CONTACTS, withSeededStack } from './seed-1m';

/**
 * `POST /exports` of every contact (docs/exports.md) on the data set of `npm run bench:lists`
 * (BENCH_CONTACTS, 1,000,000 unless told), beside `COPY … TO STDOUT` of the same rows on the same database
 * in the same run, as the physical limit: the table as COPY's text, and each row as JSON (what an NDJSON
 * file holds). The export is timed from its 202 to `completed`, then its files are downloaded through the
 * gateway and checked against the manifest; every process's resident memory is sampled every 250 ms
 * throughout, and the peak is reported beside the value before the export. `npm run bench:export`.
 */
const ROOT = join(__dirname, '..', '..');
const SAMPLE_MS = 250;
const APPS: readonly BenchApp[] = ['contacts', 'deals', 'events', 'gateway'];

interface Timed {
  seconds: number;
  bytes: number;
}

async function psqlCopy(databaseUrl: string, sql: string): Promise<Timed> {
  const started = performance.now();
  let bytes = 0;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('psql', [databaseUrl, '-X', '-q', '-c', `COPY (${sql}) TO STDOUT`], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`psql exited ${code}`))));
  });
  return { seconds: (performance.now() - started) / 1000, bytes };
}

/** The peak resident memory of each process while `work` runs, and before it. */
async function withMemory<T>(stack: BenchStack, work: () => Promise<T>): Promise<{ result: T; before: Record<string, number>; peak: Record<string, number> }> {
  const sample = () => Object.fromEntries(Object.entries(stack.children).map(([app, child]) => [app, rssMiB(child.pid!)]));
  const before = sample();
  const peak = { ...before };
  const timer = setInterval(() => {
    for (const [app, rss] of Object.entries(sample())) peak[app] = Math.max(peak[app], rss);
  }, SAMPLE_MS);
  try {
    return { result: await work(), before, peak };
  } finally {
    clearInterval(timer);
  }
}

async function api(stack: BenchStack, path: string): Promise<any> {
  const res = await fetch(`${stack.api}${path}`, { headers: { 'X-Api-Key': stack.key } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: unknown }).data;
}

async function exportContacts(stack: BenchStack): Promise<{ export: Timed; download: Timed; rows: number }> {
  const started = performance.now();
  const { id } = await stack.post('/exports', { objects: ['contacts'] });
  let view: any;
  for (;;) {
    view = await api(stack, `/exports/${id}`);
    if (view.status === 'completed') break;
    if (view.status === 'failed') throw new Error(`the export failed: ${JSON.stringify(view.error)}`);
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
  }
  const exported = { seconds: (performance.now() - started) / 1000, bytes: view.files.reduce((sum: number, f: { bytes: number }) => sum + f.bytes, 0) };
  const downloadStarted = performance.now();
  let bytes = 0;
  let rows = 0;
  for (const file of view.files as Array<{ name: string; bytes: number; sha256: string; rows: number }>) {
    const res = await fetch(`${stack.api}/exports/${id}/files/${file.name}`, { headers: { 'X-Api-Key': stack.key } });
    if (!res.ok || !res.body) throw new Error(`GET ${file.name}: ${res.status}`);
    const hash = createHash('sha256');
    let fileBytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      fileBytes += chunk.length;
    }
    if (fileBytes !== file.bytes || hash.digest('hex') !== file.sha256) throw new Error(`${file.name} is not the manifest's bytes`);
    bytes += fileBytes;
    rows += file.rows;
  }
  return { export: exported, download: { seconds: (performance.now() - downloadStarted) / 1000, bytes }, rows };
}

runBenchmark(async () => {
  await withSeededStack(
    ROOT,
    async ({ stack, seedSeconds }) => {
      process.stdout.write(`seeded ${CONTACTS} contacts in ${seedSeconds} s\n`);
      const load = [loadavg()[0]];
      const copyText = await psqlCopy(stack.databaseUrl, 'SELECT * FROM contacts.contacts ORDER BY id');
      const copyJson = await psqlCopy(stack.databaseUrl, 'SELECT row_to_json(c) FROM contacts.contacts c ORDER BY id');
      const cpuBefore = stack.cpuMs();
      const { result, before, peak } = await withMemory(stack, () => exportContacts(stack));
      const cpuSeconds = (stack.cpuMs() - cpuBefore) / 1000;
      const copyJsonAgain = await psqlCopy(stack.databaseUrl, 'SELECT row_to_json(c) FROM contacts.contacts c ORDER BY id');
      load.push(loadavg()[0]);
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
      const row = (label: string, t: Timed) =>
        `| ${label} | ${t.seconds.toFixed(1)} | ${mib(t.bytes)} | ${Math.round(result.rows / t.seconds).toLocaleString('en-US')} |`;
      const lines = [
        `Export of ${result.rows.toLocaleString('en-US')} contacts — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine()}, load ${load.map((l) => l.toFixed(1)).join(' → ')}`,
        '',
        '| | seconds | MiB | rows/s |',
        '|---|---:|---:|---:|',
        row('`POST /exports` to `completed` (NDJSON written in 256 KiB pieces)', result.export),
        row('download of its file through the gateway, SHA-256 checked', result.download),
        row('export and download', { seconds: result.export.seconds + result.download.seconds, bytes: result.download.bytes }),
        row('`COPY (SELECT * …) TO STDOUT` (text), psql', copyText),
        row('`COPY (SELECT row_to_json(c) …) TO STDOUT`, psql (before the export)', copyJson),
        row('the same, after the export', copyJsonAgain),
        '',
        `CPU of the stack's processes during the export and download: ${cpuSeconds.toFixed(1)} s. Export and download ÷ JSON COPY (mean of both): ${(
          (result.export.seconds + result.download.seconds) /
          ((copyJson.seconds + copyJsonAgain.seconds) / 2)
        ).toFixed(1)}x.`,
        '',
        '| process | RSS before, MiB | peak during, MiB |',
        '|---|---:|---:|',
        ...APPS.map((app) => `| ${app} | ${before[app]} | ${peak[app]} |`),
      ];
      process.stdout.write(lines.join('\n') + '\n');
    },
    APPS,
  );
});

import { SingleBar } from 'cli-progress';
import { createReadStream, existsSync, statSync } from 'fs';
import { extname } from 'path';
import { Readable } from 'stream';
import { parseArgs } from 'util';
import { cliOf } from './cli-common';

const USAGE = `usage: npm run import -- [--object contacts|companies] [--url http://127.0.0.1:3000] [--key KEY] FILE.csv|FILE.ndjson
  The key is --key, else CRM_API_KEY, else the development key npm start created.`;

const MEDIA_TYPES: Record<string, string> = { '.csv': 'text/csv', '.ndjson': 'application/x-ndjson', '.jsonl': 'application/x-ndjson' };
const POLL_MS = 250;

interface ImportJob {
  id: string;
  object: string;
  status: string;
  /** created, updated, failed and errors are shown only to a key that may read the object (docs/imports.md). */
  counts: { total: number; processed: number; created?: number; updated?: number; failed?: number };
  errors?: Array<{ line: number; field: string | null; message: string }>;
  failure_reason: string | null;
}

const cli = cliOf('import');
// Typed where it is declared, so that the compiler knows a call does not return.
const fail: (message: string) => never = cli.fail;
const apiKey = cli.apiKey;

/**
 * `npm run import -- contacts.csv`: uploads a CSV or NDJSON file to POST /imports, showing the upload and
 * then the rows applied as progress bars, and prints the outcome with the first row errors. Exits 1 if
 * the import failed or any row was rejected.
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { object: { type: 'string', default: 'contacts' }, url: { type: 'string' }, key: { type: 'string' } },
  });
  const [file] = positionals;
  if (!file) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const mediaType = MEDIA_TYPES[extname(file).toLowerCase()] ?? fail(`${file}: the file name must end in .csv, .ndjson or .jsonl`);
  if (!existsSync(file)) fail(`${file}: no such file`);
  const base = (values.url ?? process.env.CRM_API_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  const headers = { 'X-Api-Key': apiKey(values.key) };
  const interactive = process.stderr.isTTY;

  const size = statSync(file).size;
  const upload = new SingleBar({ format: 'upload   [{bar}] {percentage}% {value}/{total} bytes', stream: process.stderr, noTTYOutput: false });
  if (interactive) upload.start(size, 0);
  const stream = createReadStream(file);
  let sent = 0;
  stream.on('data', (chunk) => {
    sent += chunk.length;
    if (interactive) upload.update(sent);
  });
  const res = await fetch(`${base}/imports?object=${encodeURIComponent(values.object!)}`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': mediaType },
    body: Readable.toWeb(stream) as ReadableStream,
    duplex: 'half',
  } as RequestInit).catch((err: Error) => fail(`${base} is unreachable: ${err.message}`));
  if (interactive) upload.stop();
  const answer = (await res.json().catch(() => ({}))) as { data?: ImportJob; error?: { message: string } };
  if (res.status !== 202 || !answer.data) fail(`${res.status} ${answer.error?.message ?? res.statusText}`);

  let job = answer.data;
  process.stderr.write(`${job.id}: ${job.counts.total} rows received\n`);
  const applying = new SingleBar({
    format: 'applying [{bar}] {percentage}% {value}/{total} rows | {created} created, {updated} updated, {failed} failed',
    stream: process.stderr,
  });
  if (interactive) applying.start(job.counts.total, 0, job.counts);
  while (job.status !== 'completed' && job.status !== 'failed') {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const polled = await fetch(`${base}/imports/${job.id}`, { headers }).catch(() => undefined);
    if (polled?.ok) job = ((await polled.json()) as { data: ImportJob }).data;
    if (interactive) applying.update(job.counts.processed, job.counts);
  }
  if (interactive) applying.stop();

  const { counts } = job;
  if (counts.failed === undefined) {
    process.stdout.write(
      `${job.id} ${job.status}: ${counts.processed} processed of ${counts.total} (this key may not read ${job.object}, so not how each row went)\n`,
    );
    if (job.failure_reason) process.stdout.write(`  ${job.failure_reason}\n`);
    process.exitCode = job.status === 'completed' ? 0 : 1;
    return;
  }
  process.stdout.write(`${job.id} ${job.status}: ${counts.created} created, ${counts.updated} updated, ${counts.failed} failed of ${counts.total}\n`);
  if (job.failure_reason) process.stdout.write(`  ${job.failure_reason}\n`);
  const errors = job.errors ?? [];
  for (const error of errors.slice(0, 20)) process.stdout.write(`  line ${error.line}${error.field ? ` ${error.field}` : ''}: ${error.message}\n`);
  if (errors.length > 20) process.stdout.write(`  … ${counts.failed - 20} more (GET /imports/${job.id})\n`);
  process.exitCode = job.status === 'completed' && counts.failed === 0 ? 0 : 1;
}

main().catch((err: Error) => fail(err.message));

import { MultiBar } from 'cli-progress';
import { createHash } from 'crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'fs';
import { join } from 'path';
import { parseArgs } from 'util';
import { cliOf } from './cli-common';

const USAGE = `usage: npm run export -- --objects contacts,deals [--format ndjson|csv] [--gzip] [--out DIR] [--url http://127.0.0.1:3000] [--key KEY]
  Writes each file of the export and manifest.json (with as_of, where GET /events goes on) into DIR (default: exports/<id>).
  The key is --key, else CRM_API_KEY, else the development key npm start created.`;
const POLL_MS = 250;
/** Attempts at a file's download; each goes on from the bytes already written (Range). */
const ATTEMPTS = 5;

interface ExportFile {
  name: string;
  object: string;
  rows: number;
  bytes: number;
  sha256: string;
}

interface ExportView {
  id: string;
  status: string;
  objects: string[];
  as_of: string | null;
  progress: Record<string, { rows: number }>;
  files: ExportFile[];
  error: { code: string; message: string } | null;
}

const cli = cliOf('export');
// Typed where it is declared, so that the compiler knows a call does not return.
const fail: (message: string) => never = cli.fail;
const apiKey = cli.apiKey;

async function answer<T>(res: Response, what: string): Promise<T> {
  const body = (await res.json().catch(() => ({}))) as { data?: T; error?: { message: string } };
  if (!res.ok || !body.data) fail(`${what} answered ${res.status}: ${body.error?.message ?? res.statusText}`);
  return body.data;
}

/** A file's SHA-256, read as a stream: an export's file may be larger than memory. */
async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * One file into `dir`, through `<name>.part`: a broken download goes on from the bytes written (Range), and
 * the file is named only once its size and SHA-256 are the manifest's.
 */
async function download(base: string, headers: Record<string, string>, id: string, file: ExportFile, dir: string, onBytes: (n: number) => void): Promise<void> {
  const part = join(dir, `${file.name}.part`);
  for (let attempt = 1; ; attempt++) {
    const have = existsSync(part) ? statSync(part).size : 0;
    onBytes(have);
    try {
      if (have < file.bytes) {
        const res = await fetch(`${base}/exports/${id}/files/${encodeURIComponent(file.name)}`, {
          headers: { ...headers, ...(have ? { Range: `bytes=${have}-` } : {}) },
        });
        if (res.status !== (have ? 206 : 200) || !res.body) throw new Error(`${file.name}: answered ${res.status}`);
        const out = createWriteStream(part, { flags: have ? 'a' : 'w' });
        let written = have;
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
          written += chunk.length;
          onBytes(written);
        }
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      }
      if (statSync(part).size !== file.bytes || (await sha256Of(part)) !== file.sha256) {
        writeFileSync(part, '');
        throw new Error(`${file.name}: the bytes are not the manifest's (size or SHA-256); downloading it again`);
      }
      renameSync(part, join(dir, file.name));
      return;
    } catch (err) {
      if (attempt >= ATTEMPTS) throw err;
      process.stderr.write(`export: ${(err as Error).message}; trying again\n`);
      await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
}

/**
 * `npm run export -- --objects contacts,deals --out dir/`: starts an export (docs/exports.md), shows the
 * rows written per object while it runs, downloads its files (resuming a broken download, each checked
 * against its SHA-256) and writes manifest.json. Prints as_of, where GET /events goes on from.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      objects: { type: 'string' },
      format: { type: 'string', default: 'ndjson' },
      gzip: { type: 'boolean', default: false },
      out: { type: 'string' },
      url: { type: 'string' },
      key: { type: 'string' },
    },
  });
  if (!values.objects) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const base = (values.url ?? process.env.CRM_API_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
  const headers = { 'X-Api-Key': apiKey(values.key) };
  const request = { objects: values.objects.split(','), format: values.format, ...(values.gzip ? { compression: 'gzip' } : {}) };
  const started = await fetch(`${base}/exports`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(request),
  }).catch((err: Error) => fail(`${base} is unreachable: ${err.message}`));
  let view = await answer<ExportView>(started, 'POST /exports');
  // Progress bars on a terminal only; a pipe or a log gets the outcome lines.
  const bars = process.stderr.isTTY ? new MultiBar({ format: '{name} [{bar}] {value} {unit}', stream: process.stderr, hideCursor: true }) : undefined;
  const rows = Object.fromEntries(view.objects.map((object) => [object, bars?.create(1, 0, { name: object.padEnd(16), unit: 'rows' })]));
  process.stderr.write(`${view.id}: exporting ${view.objects.join(', ')}\n`);
  while (view.status === 'queued' || view.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const polled = await fetch(`${base}/exports/${view.id}`, { headers }).catch(() => undefined);
    if (polled?.ok) view = ((await polled.json()) as { data: ExportView }).data;
    for (const [object, bar] of Object.entries(rows)) {
      const n = view.progress[object]?.rows ?? 0;
      bar?.setTotal(Math.max(n, 1));
      bar?.update(n);
    }
  }
  if (view.status !== 'completed') {
    bars?.stop();
    fail(`${view.id} ${view.status}: ${view.error?.message ?? ''}`);
  }
  const dir = values.out ?? join('exports', view.id);
  mkdirSync(dir, { recursive: true });
  for (const file of view.files) {
    const bar = bars?.create(file.bytes, 0, { name: file.name.padEnd(16), unit: 'bytes' });
    await download(base, headers, view.id, file, dir, (n) => bar?.update(n));
  }
  bars?.stop();
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(view, null, 2)}\n`);
  for (const file of view.files) process.stdout.write(`${join(dir, file.name)}: ${file.rows} rows, ${file.bytes} bytes, sha256 ${file.sha256}\n`);
  process.stdout.write(`as_of ${view.as_of}\n`);
}

main().catch((err: Error) => fail(err.message));

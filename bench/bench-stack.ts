import autocannon from 'autocannon';
import { ChildProcess, execFileSync, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'fs';
import { cpus, tmpdir, totalmem } from 'os';
import { createServer } from 'net';
import { join } from 'path';
import { Client } from 'pg';

/** What benchmarks share: a whole stack as separate processes from a dist/ tree, and one load step. */
export const APPS = ['contacts', 'deals', 'events', 'webhooks', 'gateway'] as const;
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 15);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Extra node flags for every process of the stack, e.g. `--cpu-prof --cpu-prof-dir=prof` to profile a run. */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** How long a stack may take to become healthy: on a shared machine at a load average near 30, more than a minute. */
const START_TIMEOUT_MS = Number(process.env.BENCH_START_TIMEOUT_S ?? 180) * 1000;
/**
 * For a bench that writes deals straight into the tables: the deals service's stale-deal sweep (every
 * minute by default) would otherwise mark every seeded deal idle for over 14 days in one burst during the
 * timed part (tens of thousands of updates and outbox events beside the requests measured, and pages of
 * the deals table no longer all-visible to the index-only scans). The first sweep comes after a day.
 */
export const SEEDED_DEALS_ENV = { DEALS_STALE_CHECK_INTERVAL_MS: String(86_400_000) };
/** A database kept across runs (crm_bench_<name>), or none: each run on a throw-away database. */
export const KEPT_DATABASE = process.env.BENCH_DATABASE?.replace(/[^a-z0-9_]/gi, '') || undefined;

export interface Row {
  scenario: string;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  note: string;
  /** Requests completed in the run. */
  total: number;
}

export interface BenchStack {
  api: string;
  /** The stack's own database. */
  databaseUrl: string;
  key: string;
  children: Record<string, ChildProcess>;
  /** Each process's inspector port on loopback, for a stack started with `inspect`. */
  inspectPorts: Partial<Record<BenchApp, number>>;
  /** CPU milliseconds used so far by all processes of the stack. */
  cpuMs(): number;
  post(path: string, body: unknown): Promise<any>;
  stop(): Promise<void>;
}

export function alphanumeric(n: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from(randomBytes(n), (b) => alphabet[b % 62]).join('');
}

/** The repository this build was made from (dist/bench is two levels down). */
export const ROOT = join(__dirname, '..', '..');

export function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/**
 * Checks `ref` out beside this tree and builds it: with this tree's dependencies when its lockfile is this
 * tree's, else with its own (`npm ci`: an older commit may build with a tool this tree dropped).
 */
export function buildRef(ref: string): { dir: string; commit: string; remove(): void } {
  const commit = git('rev-parse', '--short', ref);
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
  git('worktree', 'add', '--detach', dir, commit);
  if (readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) {
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  } else {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 2, 2] });
  }
  // Each commit's own build command, whichever build setup it has.
  // its output on stderr, so stdout is the report alone.
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 2, 2] });
  return {
    dir,
    commit,
    remove() {
      git('worktree', 'remove', '--force', dir);
      if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function machine(): string {
  return `${cpus().length} × ${cpus()[0].model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** Until one of `urls` answers 2xx. */
async function waitFor(urls: string | string[], timeoutMs: number): Promise<void> {
  const all = ([] as string[]).concat(urls);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const url of all) if ((await fetch(url).catch(() => undefined))?.ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${all.join(' or ')} did not become healthy`);
}

export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024);
}

export interface Heap {
  /** Resident memory, MiB. */
  rss: number;
  /** V8's heap: live objects and the heap it keeps, MiB (the process gauges every /metrics serves). */
  heapUsed: number;
  heapTotal: number;
}

const MiB = 2 ** 20;

/** Each process's /metrics, on its health port: services PORT + 1 … + 4, the gateway PORT + 5, as startBenchStack sets them. */
export function metricsUrls(stack: Pick<BenchStack, 'api'>): Record<BenchApp, string> {
  const port = Number(new URL(stack.api).port);
  const urls = { gateway: `http://127.0.0.1:${port + 5}/metrics` } as Record<BenchApp, string>;
  APPS.filter((app) => app !== 'gateway').forEach((app, i) => (urls[app] = `http://127.0.0.1:${port + 1 + i}/metrics`));
  return urls;
}

export async function heapOf(metricsUrl: string, pid: number): Promise<Heap> {
  const text = await (await fetch(metricsUrl)).text();
  const gauge = (name: string) => Math.round((Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / MiB) * 10) / 10;
  return { rss: rssMiB(pid), heapUsed: gauge('nodejs_heap_size_used_bytes'), heapTotal: gauge('nodejs_heap_size_total_bytes') };
}

const CLOCK_TICKS_PER_S = 100;

/** CPU time (user + system) a process has used so far, in milliseconds, from /proc. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

export interface QuietOptions {
  /** The stack counts as quiet when all its processes together use at most this much CPU in one window. */
  quietMs?: number;
  windowMs?: number;
  /** Gives up waiting after this long. */
  maxMs?: number;
}

/**
 * CPU by process once the stack has gone quiet, so the work a load leaves behind (outbox relay, event log,
 * consumers) is counted with it and not with whatever is measured next.
 */
export async function settledCpuMs(
  stack: BenchStack,
  { quietMs = 20, windowMs = 250, maxMs = 20_000 }: QuietOptions = {},
): Promise<{ cpu: Record<string, number>; at: number; waitedMs: number }> {
  const started = performance.now();
  const read = () => Object.fromEntries(Object.entries(stack.children).map(([app, child]) => [app, cpuMs(child.pid!)]));
  const sum = (cpu: Record<string, number>) => Object.values(cpu).reduce((a, b) => a + b, 0);
  let last = read();
  for (;;) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = read();
    const at = performance.now();
    if (sum(now) - sum(last) <= quietMs || at - started > maxMs) return { cpu: now, at, waitedMs: at - started - windowMs };
    last = now;
  }
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export type BenchApp = (typeof APPS)[number];

export interface BenchStackOptions {
  /** The processes to start, all five by default; the gateway must be one of them. */
  apps?: readonly BenchApp[];
  /** Environment for every process on top of the defaults below. */
  env?: Record<string, string>;
  /** A database to use and keep (a seeded data set reused across runs) instead of a throw-away one. */
  database?: string;
  /** Starts each process with the V8 inspector on a loopback port (to collect garbage and take heap snapshots from outside). */
  inspect?: boolean;
  /** A command each process is started under (`valgrind --tool=callgrind …`), or none; node and its arguments follow it. */
  launcher?: (app: BenchApp) => string[];
  /** How long the stack may take to become healthy (default BENCH_START_TIMEOUT_S). */
  startTimeoutMs?: number;
}

/** The address every process of a stack listens on (its HOST). */
export const STACK_HOST = '127.0.0.1';

/** Whether nothing listens on a loopback port now. */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The first port of a block of six in 3900–6399 where nothing listens (nor, with inspectors, on the six
 * 20,000 higher): PostgreSQL, NATS, Redis and other stacks of a shared machine sit in that range. fetch
 * refuses the ports of the Fetch standard's block list (5060, 5061, 6000 here), where a stack would never
 * look healthy.
 */
async function freePortBlock(inspect: boolean): Promise<number> {
  for (;;) {
    const port = 3900 + Math.floor(Math.random() * 416) * 6;
    if ([5060, 5061, 6000].some((bad) => bad >= port && bad < port + 6)) continue;
    const block = [0, 1, 2, 3, 4, 5].flatMap((i) => (inspect ? [port + i, port + 20_000 + i] : [port + i]));
    if ((await Promise.all(block.map(portFree))).every(Boolean)) return port;
  }
}

/** Starts the processes built under `root/dist` (all five unless told) on a database and namespace of their own. */
export async function startBenchStack(root: string, options: BenchStackOptions = {}): Promise<BenchStack> {
  const apps = options.apps ?? APPS;
  // BENCH_DATABASE names the stack's namespace and database and keeps the database when the stack stops, so a
  // large seed is reused by the next run (bench/seed-1m.ts skips seeding a database that holds it).
  const namespace = KEPT_DATABASE ? `bench_${KEPT_DATABASE}` : `bench${randomBytes(4).toString('hex')}`;
  const dbUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm');
  dbUrl.pathname = `/${options.database ?? `crm_${namespace}`}`;
  const key = `crm_live_${alphanumeric(32)}`;
  const port = await freePortBlock(!!options.inspect);
  const env = {
    ...process.env,
    DATABASE_URL: dbUrl.toString(),
    CRM_NAMESPACE: namespace,
    CRM_BOOTSTRAP_API_KEY: key,
    PORT: String(port),
    HOST: STACK_HOST,
    HEALTH_HOST: STACK_HOST,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_BURST: '1000000',
    WEBHOOKS_ALLOW_INSECURE: 'true',
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    // A fresh key for the bench database's webhook secrets at rest.
    WEBHOOKS_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    ...options.env,
  };
  const children: Record<string, ChildProcess> = {};
  const healthPorts: Record<string, number> = { contacts: port + 1, deals: port + 2, events: port + 3, webhooks: port + 4, gateway: port + 5 };
  const inspectPorts: Partial<Record<BenchApp, number>> = {};
  for (const app of apps) {
    // Stacks take ports 3900–6399 in steps of six; their inspectors the same offsets 20,000 higher.
    if (options.inspect) inspectPorts[app] = port + 20_000 + APPS.indexOf(app);
    const inspect = options.inspect ? [`--inspect=127.0.0.1:${inspectPorts[app]}`] : [];
    const [command, ...args] = [
      ...(options.launcher?.(app) ?? []),
      process.execPath,
      ...NODE_ARGS,
      ...inspect,
      join(root, 'dist', 'apps', app, 'src', 'main.js'),
    ];
    children[app] = spawn(command, args, {
      env: { ...env, HEALTH_PORT: String(healthPorts[app] ?? 0) },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  const api = `http://127.0.0.1:${port}`;
  const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
  const stop = async () => {
    for (const child of Object.values(children)) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    const admin = new URL(dbUrl.toString());
    admin.pathname = '/postgres';
    const pg = new Client({ connectionString: admin.toString() });
    await pg.connect();
    if (!KEPT_DATABASE && !options.database) await pg.query(`DROP DATABASE IF EXISTS "crm_${namespace}" WITH (FORCE)`);
    await pg.end();
  };
  try {
    // The gateway's /health counts every service, so a partial stack waits on each process's own probe.
    const timeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
    // A build from before the health port served the gateway's /health on its API port.
    if (apps.length === APPS.length) await waitFor([`http://127.0.0.1:${healthPorts.gateway}/health`, `${api}/health`], timeoutMs);
    else for (const app of apps) await waitFor(`http://127.0.0.1:${healthPorts[app]}/health${app === 'gateway' ? '/ready' : ''}`, timeoutMs);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    api,
    databaseUrl: dbUrl.toString(),
    key,
    children,
    inspectPorts,
    stop,
    cpuMs: () => Object.values(children).reduce((sum, child) => sum + cpuMs(child.pid!), 0),
    async post(path, body) {
      const res = await fetch(`${api}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { data: any }).data;
    },
  };
}

export async function load(scenario: string, url: string, key: string, options: Partial<autocannon.Options>, note = '', durationS = DURATION_S): Promise<Row> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: durationS,
    headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' },
    ...options,
  });
  const errors = result.errors + result.timeouts + result.non2xx;
  return {
    scenario,
    requests_per_s: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors,
    note,
    total: result.requests.total,
  };
}

/** A POST /contacts load step: every request a new, unique email. */
export function createContactsLoad(): Partial<autocannon.Options> {
  let n = 0;
  return {
    method: 'POST',
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: `c${n++}-${alphanumeric(6)}@bench.example`, first_name: 'Bench', stage: 'lead' }) }),
      },
    ],
  };
}

/** Runs `work` against a stack started from `root`, and stops the stack however `work` ends. */
export async function withBenchStack<T>(root: string, work: (stack: BenchStack) => Promise<T>, options: BenchStackOptions = {}): Promise<T> {
  const stack = await startBenchStack(root, options);
  try {
    return await work(stack);
  } finally {
    await stack.stop();
  }
}

/** This tree's commit, marked when it has uncommitted changes. */
export function thisBuild(): string {
  return git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain') ? '+changes' : '');
}

/** A benchmark script's entry point: a failure is printed with its stack and ends the process with 1. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((err) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}

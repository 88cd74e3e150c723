import { ChildProcess, execFile, spawn, spawnSync } from 'child_process';
import { randomBytes } from 'crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { createServer, Socket } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Env } from '@crm/common';
import { eventually } from './api-client';

const ROOT = join(__dirname, '..', '..');

/** Every port this process's freePort has answered, so none is answered twice. */
const handedOut = new Set<number>();

/**
 * A port for a process that must listen where it is told (a private server, a gateway restarted in place).
 * Picked below the kernel's ephemeral range, which bind(0) and every outgoing connection draw from: a port
 * taken from that range and handed over was, on a busy machine, soon the local end of someone's connection.
 */
export async function freePort(): Promise<number> {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const floor = 10_000;
  for (;;) {
    const port = floor + Math.floor(Math.random() * Math.max(1, low - floor));
    // A port handed out but not yet listened on is still free: callers picking several at once
    // (a cluster's client and route ports) must not get one twice.
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await canListen(port)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Starts a server on a port freePort picked (or on the ports `pick` picks: a cluster's), and on others when
 * one was taken between the check and the server's bind (another process on the machine may bind any port at
 * any moment): the server then exits saying the address is in use, and only that is tried again.
 */
export async function onFreePort<T, P = number>(start: (port: P) => Promise<T>, pick: () => Promise<P> = freePort as () => Promise<P>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    try {
      return await start(port);
    } catch (err) {
      if (attempt >= 5 || !/address already in use/i.test((err as Error).message)) throw err;
    }
  }
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

/**
 * Waits until a freshly spawned server says it is ready and its port answers. Its own word is needed: a port
 * another process took first answers too, while the server exits for want of it. A server that exits first
 * fails the wait at once with what it printed, instead of leaving the caller to time out; the timeout is
 * only a safety net.
 */
async function listening(child: ChildProcess, port: number, name: string, output: () => string, ready: RegExp): Promise<void> {
  await eventually(
    async () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new ExitedEarly(`${name} exited (${child.exitCode ?? child.signalCode}): ${output().trim()}`);
      return ready.test(output()) && (await portOpen(port)) ? true : undefined;
    },
    120_000,
    50,
    (err) => err instanceof ExitedEarly,
  );
}

/** What nats-server and redis-server print once they accept clients. */
const NATS_READY = /Server is ready/;
const REDIS_READY = /Ready to accept connections/;

class ExitedEarly extends Error {}

/**
 * Collects what a child writes (stdout when piped, and stderr), so a failed start says why. Its start-up lines
 * are kept whole, since the wait for the server looks for its ready line among them.
 */
function outputOf(child: ChildProcess): () => string {
  let start = '';
  let text = '';
  const add = (d: Buffer) => {
    if (start.length < 8000) start += d.toString();
    text = (text + d.toString()).slice(-4000);
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  return () => (start.length < 8000 ? start : `${start}\n…\n${text}`);
}

/** Runs a built script to completion (`npm run build` first), with only PATH and `env` in its environment. */
export interface BuiltRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a built script to its end without blocking this process, whose in-process stack keeps serving
 * (a blocked event loop would let keep-alive connections expire under the client's feet).
 */
export function runBuilt(script: string, args: string[], env: Env): Promise<BuiltRun> {
  const path = join(ROOT, 'dist', script);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does)`);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path, ...args], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ status: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

/** The ports a process reports in its ready lines: the health port (every process) and the gateway's API port. */
function announcedPort(what: 'api' | 'health', log: string): number | undefined {
  const ready = what === 'api' ? /CRM API listening on http:\/\/127\.0\.0\.1:(\d+)/ : / health on http:\/\/127\.0\.0\.1:(\d+)\/health/;
  const match = ready.exec(log);
  return match ? Number(match[1]) : undefined;
}

export interface ServiceProcess {
  child: ChildProcess;
  healthUrl: string;
  /** Where the process listens (the API, for the gateway). */
  url: string;
  output(): string;
  /** SIGKILL: no shutdown hooks, no flushing; what a crash or OOM kill looks like. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs a built service (`npm run build` first) as its own OS process, as production does. */
export async function spawnService(app: string, env: Env, options: { port?: number } = {}): Promise<ServiceProcess> {
  const main = join(ROOT, 'dist', 'apps', app, 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first (npm test does)`);
  // A fixed port lets a restarted process come back where its clients expect it. Otherwise the process
  // binds port 0 and says where it listens: a port picked here and handed over could be taken in between
  // by another test's process, which then answered this one's health checks.
  const requested = options.port ?? 0;
  // Every process serves /health on a health port of its own (announced); the gateway the API on PORT besides.
  const health = { HEALTH_PORT: app === 'gateway' ? '0' : String(requested), HEALTH_HOST: '127.0.0.1' };
  const listen = app === 'gateway' ? { ...health, PORT: String(requested), HOST: '127.0.0.1' } : health;
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, ...env, ...listen },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let port = requested;
  let healthPort = app === 'gateway' ? 0 : requested;
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new ExitedEarly(`${app} exited: ${log}`);
        if (port === 0) port = announcedPort(app === 'gateway' ? 'api' : 'health', log) ?? 0;
        if (healthPort === 0) healthPort = app === 'gateway' ? (announcedPort('health', log) ?? 0) : port;
        if (port === 0 || healthPort === 0) return undefined;
        const res = await fetch(`http://127.0.0.1:${healthPort}/health`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      // A safety net: the wait ends when the process is healthy or exits; a loaded machine starts it slowly.
      120_000,
      100,
      (err) => err instanceof ExitedEarly,
    );
  } catch (err) {
    // A process that never became ready is not left running after the failed test.
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    throw err;
  }
  const healthUrl = `http://127.0.0.1:${healthPort}/health`;
  return {
    child,
    healthUrl,
    url: `http://127.0.0.1:${port}`,
    output: () => log,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface NatsServer {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP: the server keeps its connections but answers nothing, as a hung broker or a stalled network does. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** Stops the server and deletes its JetStream store. */
  destroy(): Promise<void>;
}

/**
 * A private NATS server with JetStream on a free port, so a test can stop and restart the broker
 * without disturbing anything else on the machine. Its store survives restarts, like a real one.
 * `config` is the text of a configuration file (e.g. an authorization block), `env` what it reads.
 */
export function startNatsServer(options: { config?: string; env?: Record<string, string> } = {}): Promise<NatsServer> {
  return onFreePort((port) => natsServerOn(port, options));
}

export async function natsServerOn(port: number, options: { config?: string; env?: Record<string, string> }): Promise<NatsServer> {
  const binary = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
  const store = mkdtempSync(join(tmpdir(), 'crm-nats-'));
  const configFile = join(store, 'server.conf');
  if (options.config !== undefined) writeFileSync(configFile, options.config);
  let child: ChildProcess | undefined;
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store, ...(options.config === undefined ? [] : ['-c', configFile])];
      // stderr read and dropped: a server with a configuration file left to write to an ignored stderr exited at once here.
      child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH, ...options.env } });
      await listening(child, port, 'nats-server', outputOf(child), NATS_READY);
    },
    async stop() {
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async destroy() {
      server.resume();
      await server.stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
  await server.start().catch((err) => {
    rmSync(store, { recursive: true, force: true });
    throw err;
  });
  return server;
}

/**
 * A NATS user's password as docs/deployment.md makes one: the server parses `$VARIABLE` values, so a bare
 * hex string that reads as a number (`9e12…`) would stop it; the letters in front keep every one a string.
 */
export function natsPassword(random = randomBytes(24).toString('hex')): string {
  return `crm_nats_${random}`;
}

/** Whether nats-server accepts a configuration file with these variables in its environment (`-t`: test and exit). */
export function natsConfigAccepted(config: string, env: Record<string, string>): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'crm-natsconf-'));
  try {
    const file = join(dir, 'server.conf');
    writeFileSync(file, config);
    const run = spawnSync(process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server', ['-c', file, '-t'], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Three private NATS servers with JetStream, clustered over loopback, as a production NATS cluster is.
 * `url` names one of them, as a Kubernetes Service would; clients learn the others from it.
 */
export async function startNatsCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  // Six ports: when one was taken before its node bound it, the whole cluster starts again on six others.
  return onFreePort(natsClusterOn, () => Promise.all([0, 1, 2].map(async () => ({ port: await freePort(), routePort: await freePort() }))));
}

async function natsClusterOn(ports: Array<{ port: number; routePort: number }>): Promise<{ url: string; stop(): Promise<void> }> {
  const binary = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
  const nodes = ports.map(({ port, routePort }, i) => ({ name: `n${i}`, port, routePort, store: mkdtempSync(join(tmpdir(), 'crm-natsc-')) }));
  const routes = nodes.map((n) => `nats://127.0.0.1:${n.routePort}`).join(',');
  const children = nodes.map((n) =>
    spawn(
      binary,
      [
        '-a',
        '127.0.0.1',
        '-p',
        String(n.port),
        '-js',
        '-sd',
        n.store,
        '-n',
        n.name,
        '--cluster_name',
        'crm-test',
        '--cluster',
        `nats://127.0.0.1:${n.routePort}`,
        '--routes',
        routes,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    ),
  );
  const stop = async () => {
    await Promise.all(
      children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))))),
    );
    for (const n of nodes) rmSync(n.store, { recursive: true, force: true });
  };
  const outputs = children.map((child) => outputOf(child));
  await Promise.all(nodes.map((n, i) => listening(children[i], n.port, `nats-server ${n.name}`, outputs[i], NATS_READY))).catch(async (err) => {
    await stop();
    throw err;
  });
  return { url: `nats://127.0.0.1:${nodes[0].port}`, stop };
}

export interface RedisServer {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A private Redis on a free port that keeps nothing on disk, to stop and restart under a running stack. */
export function startRedisServer(): Promise<RedisServer> {
  return onFreePort(redisServerOn);
}

export async function redisServerOn(port: number): Promise<RedisServer> {
  let child: ChildProcess | undefined;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      await listening(child, port, 'redis-server', outputOf(child), REDIS_READY);
    },
    async stop() {
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
  await server.start();
  return server;
}

export interface PostgresServer {
  port: number;
  /** A URL of a database on this server (created by the first service that starts). */
  url(database: string): string;
  start(): Promise<void>;
  /** A fast shutdown: sessions are cut, as in a failover or a crash of the database host. */
  stop(): Promise<void>;
  /** Stops the server and deletes its data directory. */
  destroy(): Promise<void>;
}

function runPg(binary: string, args: string[]): Promise<void> {
  // PostgreSQL refuses to run as root; test machines and CI containers often are.
  const asRoot = process.getuid?.() === 0;
  const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${binary} ${args[0]} exited ${code}: ${err}`))));
  });
}

/**
 * A private PostgreSQL on a free port with its own data directory, so a test can stop and restart the
 * database without disturbing anything else on the machine. Uses initdb and pg_ctl from PATH, or from
 * PG_BIN_DIR.
 */
export function startPostgresServer(): Promise<PostgresServer> {
  return onFreePort(postgresServerOn);
}

export async function postgresServerOn(port: number): Promise<PostgresServer> {
  const bin = (name: string) => (process.env.PG_BIN_DIR ? join(process.env.PG_BIN_DIR, name) : name);
  const dir = mkdtempSync(join(tmpdir(), 'crm-pg-'));
  if (process.getuid?.() === 0)
    await new Promise<void>((resolve, reject) =>
      spawn('chown', ['postgres', dir]).once('exit', (c) => (c === 0 ? resolve() : reject(new Error('chown failed')))),
    );
  const data = join(dir, 'data');
  await runPg(bin('initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const server: PostgresServer = {
    port,
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      const log = join(dir, 'log');
      // Why a start failed (a port in use among others) is in the server's log, not in what pg_ctl prints.
      await runPg(bin('pg_ctl'), ['start', '-w', '-D', data, '-l', log, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`]).catch(
        (err: Error) => {
          throw new Error(`${err.message}\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`);
        },
      );
      // pg_ctl start -w returns once the server accepts connections (or fails, naming why).
      await eventually(async () => ((await portOpen(port)) ? true : undefined), 120_000, 50);
    },
    async stop() {
      await runPg(bin('pg_ctl'), ['stop', '-w', '-D', data, '-m', 'fast']);
    },
    async destroy() {
      await server.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start().catch((err) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  return server;
}

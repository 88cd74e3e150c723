import { ChildProcess, spawn } from 'child_process';
import { existsSync, mkdtempSync, rmSync } from 'fs';
import { createServer, Socket } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { Env } from '@crm/common';
import { eventually } from './api-client';

const ROOT = join(__dirname, '..', '..');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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

export interface ServiceProcess {
  child: ChildProcess;
  healthUrl: string;
  output(): string;
  /** SIGKILL: no shutdown hooks, no flushing; what a crash or OOM kill looks like. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs a built service (`npm run build` first) as its own OS process, as production does. */
export async function spawnService(app: string, env: Env): Promise<ServiceProcess> {
  const main = join(ROOT, 'dist', 'apps', app, 'src', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first (npm test does)`);
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    env: { PATH: process.env.PATH, ...env, HEALTH_PORT: String(port), HEALTH_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const healthUrl = `http://127.0.0.1:${port}/health`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`${app} exited: ${log}`);
    const res = await fetch(healthUrl).catch(() => undefined);
    return res?.ok ? true : undefined;
  }, 30_000, 100);
  return {
    child,
    healthUrl,
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
  /** Stops the server and deletes its JetStream store. */
  destroy(): Promise<void>;
}

/**
 * A private NATS server with JetStream on a free port, so a test can stop and restart the broker
 * without disturbing anything else on the machine. Its store survives restarts, like a real one.
 */
export async function startNatsServer(): Promise<NatsServer> {
  const binary = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), 'crm-nats-'));
  let child: ChildProcess | undefined;
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
      await eventually(async () => ((await portOpen(port)) ? true : undefined), 10_000, 50);
    },
    async stop() {
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
    async destroy() {
      await server.stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

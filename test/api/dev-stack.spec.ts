import { ChildProcess, execFile, spawn } from 'child_process';
import { randomInt } from 'crypto';
import { readFileSync } from 'fs';
import { join } from 'path';
import { promisify } from 'util';
import { eventually } from '../support/api-client';
import { dropNamespace, randomKey, testEnv } from '../support/stack';

/**
 * `npm start` as a developer runs it (the built script): it binds everything to 127.0.0.1, derives the
 * services' health ports from PORT, and so two stacks with their own PORT and namespace run side by side.
 */
const SCRIPT = join(__dirname, '..', '..', 'dist', 'scripts', 'start-stack.js');

/** Addresses listening on a TCP port, from the kernel's table (IPv4, hex address and port). */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && cols[1]?.endsWith(`:${hexPort}`))
    .map((cols) => {
      const hex = cols[1].split(':')[0];
      return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
    });
}

interface DevStack {
  child: ChildProcess;
  output: () => string;
  port: number;
  env: Record<string, string | undefined>;
}

/**
 * Five consecutive free ports below the kernel's ephemeral range (where outgoing connections would take
 * them from under us), apart from those the other stack took.
 */
async function freeRange(taken: number[]): Promise<number> {
  const ephemeralStart = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  for (;;) {
    const port = 20_000 + randomInt(Math.max(1, ephemeralStart - 20_010));
    if (taken.some((t) => Math.abs(t - port) < 6)) continue;
    if ([0, 1, 2, 3, 4, 5].every((i) => listeners(port + i).length === 0)) return port;
  }
}

async function startDevStack(taken: number[] = [], node = process.execPath): Promise<DevStack> {
  const port = await freeRange(taken);
  const {
    PORT: _port,
    HOST: _host,
    HEALTH_PORT: _hp,
    HEALTH_HOST: _hh,
    ...env
  } = testEnv(undefined, {
    CRM_BOOTSTRAP_API_KEY: randomKey(),
    LOG_LEVEL: 'info',
    // Two stacks of five processes beside the other test runs' stacks: small pools keep the shared server under its 100 connections.
    DATABASE_POOL_SIZE: '2',
  });
  const child = spawn(node, [SCRIPT], { env: { PATH: process.env.PATH, ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  return { child, output: () => log, port, env };
}

async function stopDevStack(stack: DevStack): Promise<void> {
  if (stack.child.exitCode === null) {
    const exited = new Promise((resolve) => stack.child.once('exit', resolve));
    stack.child.kill('SIGINT');
    await exited;
  }
  await dropNamespace(stack.env);
}

/**
 * The Node.js release the image runs (the Dockerfile's NODE_IMAGE), from the npm registry's package of
 * that release's binary for this platform: our machines run Node 20, the image Node 22.
 */
async function imageNode(): Promise<{ version: string; path: string }> {
  const image = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(readFileSync(join(__dirname, '..', '..', 'Dockerfile'), 'utf8'));
  if (!image) throw new Error('the Dockerfile names no NODE_IMAGE release');
  const version = image[1];
  const pkg = `node-${process.platform}-${process.arch}@${version}`;
  const { stdout } = await promisify(execFile)('npm', ['exec', '--yes', `--package=${pkg}`, '--', 'node', '-p', 'process.version + " " + process.execPath'], {
    timeout: 150_000,
  });
  const [reported, path] = stdout.trim().split(' ');
  expect(reported).toBe(`v${version}`);
  return { version, path };
}

/** A contact written through the stack's API, then read back, and its event read from the log. */
async function writeAndRead(stack: DevStack): Promise<void> {
  const base = `http://127.0.0.1:${stack.port}`;
  const headers = { 'X-Api-Key': stack.env.CRM_BOOTSTRAP_API_KEY!, 'Content-Type': 'application/json' };
  const created = await fetch(`${base}/contacts`, { method: 'POST', headers, body: JSON.stringify({ email: `node.${stack.port}@example.com` }) });
  expect(created.status).toBe(201);
  const { data } = (await created.json()) as { data: { id: string } };
  expect((await fetch(`${base}/contacts/${data.id}`, { headers })).status).toBe(200);
  await eventually(async () => {
    const res = await fetch(`${base}/events?type=contact.created`, { headers });
    const body = (await res.json()) as { data: Array<{ data: { contact_id?: string } }> };
    return body.data.some((e) => e.data.contact_id === data.id) ? true : undefined;
  }, 60_000);
}

describe('npm start', () => {
  const stacks: DevStack[] = [];
  afterAll(async () => {
    await Promise.all(stacks.map(stopDevStack));
  });

  it('runs two stacks side by side, each on 127.0.0.1 only, health ports following PORT', async () => {
    stacks.push(await startDevStack());
    stacks.push(await startDevStack([stacks[0].port]));
    for (const stack of stacks) {
      await eventually(async () => (stack.output().includes('CRM API ready') ? true : undefined), 90_000, 200).catch(() => {
        throw new Error(`stack on ${stack.port} did not start:\n${stack.output()}`);
      });
      expect(stack.output()).toContain(`CRM API ready at http://127.0.0.1:${stack.port}`);
      const ports = [stack.port, stack.port + 1, stack.port + 2, stack.port + 3, stack.port + 4, stack.port + 5];
      for (const port of ports) expect({ port, addresses: listeners(port) }).toEqual({ port, addresses: ['127.0.0.1'] });
      for (const port of ports.slice(1)) expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
      // The gateway's probes and metrics are on its health port (PORT + 5), not on the API's.
      expect((await fetch(`http://127.0.0.1:${stack.port + 5}/health`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${stack.port}/metrics`)).status).not.toBe(200);
      // Readable lines with the process name, not raw JSON.
      expect(stack.output()).toMatch(/^gateway {2}\| \d\d:\d\d:\d\d\.\d{3} info {2}gateway ready/m);
      expect(stack.output()).not.toMatch(/^\w+ +\| \{"level"/m);
    }
  }, 180_000);

  it('runs on the Node.js release of the image: every process, writes, reads and the event log', async () => {
    const node = await imageNode();
    const stack = await startDevStack(
      stacks.map((s) => s.port),
      node.path,
    );
    stacks.push(stack);
    await eventually(async () => (stack.output().includes('CRM API ready') ? true : undefined), 90_000, 200).catch(() => {
      throw new Error(`stack on ${stack.port} did not start on Node ${node.version}:\n${stack.output()}`);
    });
    // Each service's runtime metrics name the Node.js release it runs on.
    for (const port of [stack.port + 1, stack.port + 2, stack.port + 3, stack.port + 4]) {
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect({ port, version: /^nodejs_version_info\{version="(v[^"]+)"/m.exec(metrics)?.[1] }).toEqual({ port, version: `v${node.version}` });
    }
    await writeAndRead(stack);
  }, 300_000);
});

import { Agent, request } from 'http';
import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { spawnService, ServiceProcess } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

interface Answer {
  status?: number;
  connection?: string;
  error?: string;
  /** Sent after SIGTERM. */
  afterSignal: boolean;
  sentAt: number;
  /** Answered (or failed) after SIGTERM. */
  endedAfterSignal: boolean;
  endedAt: number;
}

function send(
  agent: Agent,
  url: string,
  method: string,
  path: string,
  key: string,
  body?: unknown,
): Promise<{ status: number; connection?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      { agent, method, headers: { 'X-Api-Key': key, ...(payload ? { 'Content-Type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * SIGTERM of a gateway process while keep-alive clients keep sending: it stops accepting connections,
 * answers what arrives on open connections with `Connection: close`, finishes the request in flight,
 * and exits well within its grace period instead of serving the stream for ever.
 */
describe('gateway shutdown on SIGTERM under keep-alive load', () => {
  let stack: TestStack;
  let gateway: ServiceProcess;
  let db: Client;
  const GRACE_MS = 10_000;

  beforeAll(async () => {
    // All services: the spawned gateway reports ready only when /health sees every one.
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' } });
    gateway = await spawnService('gateway', { ...stack.env, SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await gateway?.stop();
    await stack?.stop();
  });

  it('sends Connection: close, finishes the request in flight and exits within the grace period', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 6 });
    const created = await send(agent, gateway.url, 'POST', '/contacts', stack.apiKey, { email: `shutdown-${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const id = JSON.parse(created.body).data.id as string;

    // Hold the contact's row so an update stays in flight through the signal.
    await db.query('BEGIN');
    await db.query('SELECT 1 FROM contacts.contacts WHERE id = $1 FOR UPDATE', [id]);
    const inFlight = send(new Agent({ keepAlive: true }), gateway.url, 'PATCH', `/contacts/${id}`, stack.apiKey, { first_name: 'Finished' });
    await eventually(async () => {
      const { rows } = await db.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
      );
      return rows.length ? true : undefined;
    });

    let exitedAt: number | undefined;
    const exited = new Promise<number | null>((resolve) =>
      gateway.child.once('exit', (code) => {
        exitedAt = Date.now();
        resolve(code);
      }),
    );
    let signalled = false;
    const answers: Answer[] = [];
    const streamDeadline = Date.now() + GRACE_MS + 5_000;
    const streams = Array.from({ length: 6 }, async () => {
      while (exitedAt === undefined && Date.now() < streamDeadline) {
        const afterSignal = signalled;
        const sentAt = Date.now();
        try {
          const res = await send(agent, gateway.url, 'GET', '/contacts?limit=1', stack.apiKey);
          answers.push({ status: res.status, connection: res.connection, afterSignal, sentAt, endedAfterSignal: signalled, endedAt: Date.now() });
        } catch (err) {
          answers.push({ error: (err as NodeJS.ErrnoException).code ?? String(err), afterSignal, sentAt, endedAfterSignal: signalled, endedAt: Date.now() });
          if ((err as NodeJS.ErrnoException).code === 'ECONNREFUSED') await new Promise((r) => setTimeout(r, 20));
        }
      }
    });
    await eventually(async () => (answers.length >= 50 ? true : undefined));

    gateway.child.kill('SIGTERM');
    const signalledAt = Date.now();
    signalled = true;
    // The listener closes: new connections are refused while the request in flight goes on.
    await eventually(async () => (answers.some((a) => a.afterSignal && a.error === 'ECONNREFUSED') ? true : undefined), 120_000, 20);
    await new Promise((r) => setTimeout(r, 500));
    expect(gateway.child.exitCode).toBeNull(); // still finishing the request in flight

    await db.query('COMMIT');
    const finished = await inFlight;
    expect(finished.status).toBe(200);
    expect(JSON.parse(finished.body).data.first_name).toBe('Finished');
    expect(finished.connection).toBe('close');

    expect(await exited).toBe(0);
    await Promise.all(streams);
    agent.destroy();
    const exitMs = exitedAt! - signalledAt;
    // Well within the grace period, though the clients never stopped sending.
    expect(exitMs).toBeLessThan(GRACE_MS);

    const before = answers.filter((a) => !a.endedAfterSignal);
    expect(before.every((a) => a.status === 200)).toBe(true);
    // Answers that ended after the signal, whenever sent: in full with Connection: close, so keep-alive
    // clients open no further request on that connection; or, for a request sent after the signal on a
    // new connection, refused (the listener is closed). Never a 5xx, never a request cut off mid-way.
    // The process handles the signal some time after it is sent, however long a loaded machine takes; a
    // refused connection shows it had closed its listener: judge the answers to requests sent after that.
    const after = answers.filter((a) => a.endedAfterSignal);
    const firstRefusedAt = Math.min(...answers.filter((a) => a.error === 'ECONNREFUSED').map((a) => a.endedAt));
    const served = after.filter((a) => a.status !== undefined && a.sentAt > firstRefusedAt);
    expect(after.filter((a) => a.status !== undefined).every((a) => a.status === 200)).toBe(true);
    expect(served.filter((a) => !(a.status === 200 && a.connection === 'close'))).toEqual([]);
    const failures = after.filter((a) => a.error !== undefined);
    expect(failures.filter((a) => !(a.afterSignal && a.error === 'ECONNREFUSED'))).toEqual([]);
    expect(gateway.output()).not.toMatch(/"level":(50|60)/);
    process.stdout.write(
      `gateway shutdown: exited ${exitMs} ms after SIGTERM; ${before.length} answers before, ${served.length} after (all Connection: close), ${failures.length} refused connections\n`,
    );
  });
});

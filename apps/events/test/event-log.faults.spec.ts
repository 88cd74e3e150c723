import { Client } from 'pg';
import { ApiClient, eventually } from '@crm/test-support';
import { NatsServer, ServiceProcess, spawnService, startNatsServer } from '@crm/test-support';
import { startStack, TestStack } from '@crm/test-support';

const UNLIMITED = { RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_BURST: '1000000' };

/** Creates `count` keys with `concurrency` requests in flight, revoking every third right after creating it. */
async function writeKeys(api: ApiClient, count: number, concurrency: number, done: string[], revoked: string[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const res = await api.post('/apikeys', { name: `burst-${n}`, scope: 'read' });
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${res.text}`);
      done.push(res.body.data.id);
      if (n % 3 === 0) {
        const del = await api.delete(`/apikeys/${res.body.data.id}`);
        if (del.status !== 204) throw new Error(`revoke answered ${del.status}: ${del.text}`);
        revoked.push(res.body.data.id);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function committedKeyIds(stack: TestStack): Promise<{ all: string[]; revoked: string[] }> {
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  try {
    const rows = (await pg.query(`SELECT id, revoked_at IS NOT NULL AS revoked FROM gateway.api_keys`)).rows as { id: string; revoked: boolean }[];
    return { all: rows.map((r) => r.id), revoked: rows.filter((r) => r.revoked).map((r) => r.id) };
  } finally {
    await pg.end();
  }
}

/** Every committed key has exactly one created event, every revoked one exactly one revoked event after it. */
async function expectLogMatches(stack: TestStack): Promise<void> {
  const committed = await committedKeyIds(stack);
  const log = await eventually(
    async () => {
      const events = await stack.api.listAll('/events?type=api_key.*').catch(() => undefined);
      return events && events.length >= committed.all.length + committed.revoked.length ? events : undefined;
    },
    120_000,
    200,
  ).catch(async (err) => {
    const events = await stack.api.listAll('/events?type=api_key.*').catch((e) => String(e));
    throw new Error(
      `${err}; committed ${committed.all.length} keys, ${committed.revoked.length} revoked; log has ${Array.isArray(events) ? events.length : events}`,
    );
  });
  expect(new Set(log.map((e) => e.id)).size).toBe(log.length);
  const created = log.filter((e) => e.type === 'api_key.created').map((e) => e.data.key_id);
  const revoked = log.filter((e) => e.type === 'api_key.revoked').map((e) => e.data.key_id);
  expect([...created].sort()).toEqual([...committed.all].sort());
  expect([...revoked].sort()).toEqual([...committed.revoked].sort());
  const position = new Map(log.map((e, i) => [`${e.type} ${e.data.key_id}`, i]));
  for (const id of committed.revoked) {
    expect(position.get(`api_key.created ${id}`)!).toBeLessThan(position.get(`api_key.revoked ${id}`)!);
  }
}

describe('event log under failures', () => {
  it('loses and doubles nothing when the events service is killed with SIGKILL mid-burst', async () => {
    const stack = await startStack({ services: [], env: UNLIMITED });
    let events: ServiceProcess | undefined;
    try {
      events = await spawnService('events', stack.env);
      const done: string[] = [];
      const revoked: string[] = [];
      const burst = writeKeys(stack.api, 600, 8, done, revoked);
      // Kill it while it is writing: once part of the burst is already in the log.
      await eventually(
        async () => {
          const res = await stack.api.get('/events?type=api_key.created&limit=200');
          return res.status === 200 && res.body.data.length >= 100 ? true : undefined;
        },
        120_000,
        20,
      );
      await events.kill9();
      await burst;
      events = await spawnService('events', stack.env);
      await expectLogMatches(stack);
      expect(done).toHaveLength(600);
    } finally {
      await events?.stop();
      await stack.stop();
    }
    // Two service starts and 600 writes; on a loaded machine over a minute. A deadline for a hang, not a speed.
  }, 300_000);

  it('drains every outbox after NATS was down during writes', async () => {
    const nats: NatsServer = await startNatsServer();
    const stack = await startStack({ services: ['events'], env: { ...UNLIMITED, NATS_URL: nats.url } });
    try {
      const done: string[] = [];
      const revoked: string[] = [];
      const writing = writeKeys(stack.api, 300, 4, done, revoked);
      await eventually(async () => (done.length >= 60 ? true : undefined), 120_000, 10);
      await nats.stop();
      // The gateway's own writes keep succeeding while the broker is away; their events wait in its outbox.
      await writing;
      expect(done).toHaveLength(300);
      const outage = await stack.api.get('/events');
      expect(outage.status).toBe(503);
      expect(outage.body.error.code).toBe('service_unavailable');
      await nats.start();
      await expectLogMatches(stack);
    } finally {
      await stack.stop().catch(() => undefined);
      await nats.destroy();
    }
  });
});

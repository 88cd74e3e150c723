import { Client } from 'pg';
import { ApiClient, eventually } from '../support/api-client';
import { spawnService } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

describe('Idempotency-Key', () => {
  let stack: TestStack;
  /** Holds the locks that keep a request in flight. */
  let db: Client;
  /** Watches who waits on db's locks, from outside db's transactions. */
  let observer: Client;
  let holderPid: number;
  beforeAll(async () => {
    // Every service runs: a spawned gateway reports healthy only then.
    // The services are waited for as long as a slow machine needs (a request held on a lock waits while a
    // second gateway starts); the tests of a gateway that gives up start one with their own RPC_TIMEOUT_MS.
    stack = await startStack({ env: { RPC_TIMEOUT_MS: '60000' } });
    db = new Client({ connectionString: stack.databaseUrl });
    observer = new Client({ connectionString: stack.databaseUrl });
    await Promise.all([db.connect(), observer.connect()]);
    holderPid = (await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  });
  afterAll(async () => {
    await Promise.all([db.end(), observer.end()]);
    await stack.stop();
  });

  let n = 0;
  const key = () => `idem-${Date.now()}-${n++}`;
  const email = () => `idem-${Date.now()}-${n++}@example.com`;
  const withKey = (k: string) => ({ headers: { 'Idempotency-Key': k } });

  /**
   * Resolves once `n` sessions wait on the locks db holds, directly or behind another waiting session. Read
   * through `observer`: inside db's transaction, pg_stat_activity lists only the sessions that existed at
   * its first read there, so a request on a connection its service opened later would never be seen.
   * Generous budget: on a loaded machine a request can take seconds to reach its lock.
   */
  const waitForLockWaiters = (n: number) =>
    eventually(async () => {
      const { rows } = await observer.query<{ waiting: number }>(
        `WITH RECURSIVE behind(pid) AS (
           SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))
           UNION
           SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = ANY(pg_blocking_pids(a.pid))
         )
         SELECT count(*)::int AS waiting FROM behind`,
        [holderPid],
      );
      return rows[0].waiting >= n ? true : undefined;
    }, 120_000);
  const pipelinesNamed = async (name: string) =>
    (await db.query<{ id: string }>('SELECT id FROM deals.pipelines WHERE name = $1', [name])).rows.map((r) => r.id);

  it('replays the first response to a retry, with Idempotent-Replayed, and writes once', async () => {
    const k = key();
    const body = { email: email(), first_name: 'Once' };
    const first = await stack.api.post('/contacts', body, withKey(k));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await stack.api.post('/contacts', body, withKey(k));
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const listed = await stack.api.get(`/contacts?search=${encodeURIComponent(body.email)}`);
    expect(listed.body.data).toHaveLength(1);
  });

  it('replays errors too, and DELETE answers its first 204 again rather than 404', async () => {
    const k = key();
    const bad = await stack.api.post('/contacts', { email: 'nope' }, withKey(k));
    expect(bad.status).toBe(400);
    const badAgain = await stack.api.post('/contacts', { email: 'nope' }, withKey(k));
    expect(badAgain.status).toBe(400);
    expect(badAgain.headers.get('idempotent-replayed')).toBe('true');
    expect(badAgain.body).toEqual(bad.body);

    const contact = (await stack.api.post('/contacts', { email: email() })).body.data;
    const d = key();
    expect((await stack.api.delete(`/contacts/${contact.id}`, withKey(d))).status).toBe(204);
    const replayed = await stack.api.delete(`/contacts/${contact.id}`, withKey(d));
    expect(replayed.status).toBe(204);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect((await stack.api.delete(`/contacts/${contact.id}`)).status).toBe(404);
  });

  it('answers 422 when the key is reused for a different request', async () => {
    const k = key();
    expect((await stack.api.post('/pipelines', { name: 'A', stages: [{ name: 'New', type: 'open' }] }, withKey(k))).status).toBe(201);
    const other = await stack.api.post('/pipelines', { name: 'B', stages: [{ name: 'New', type: 'open' }] }, withKey(k));
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    const otherPath = await stack.api.post('/contacts', { name: 'A', stages: [{ name: 'New', type: 'open' }] }, withKey(k));
    expect(otherPath.status).toBe(422);
  });

  it('keeps keys apart per API key, and refuses a malformed key', async () => {
    const k = key();
    const second = (await stack.api.post('/apikeys', { name: 'second', scope: 'read-write' })).body.data.key as string;
    const a = await stack.api.post('/pipelines', { name: 'Mine', stages: [{ name: 'New', type: 'open' }] }, withKey(k));
    const b = await stack.api.withKey(second).post('/pipelines', { name: 'Mine', stages: [{ name: 'New', type: 'open' }] }, withKey(k));
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.data.id).not.toBe(a.body.data.id);
    const malformed = await stack.api.post('/pipelines', { name: 'x' }, withKey('x'.repeat(256)));
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details[0].field).toBe('Idempotency-Key');
  });

  it('answers 409 to a retry while the first is in flight, then replays it, on any replica', async () => {
    const contact = (await stack.api.post('/contacts', { email: email() })).body.data;
    const k = key();
    await db.query('BEGIN');
    await db.query('SELECT 1 FROM contacts.contacts WHERE id = $1 FOR UPDATE', [contact.id]);
    const first = stack.api.patch(`/contacts/${contact.id}`, { first_name: 'Slow' }, withKey(k));
    await waitForLockWaiters(1);
    const replica = await stack.startGateway();
    const other = new ApiClient(replica.url, stack.apiKey);
    const concurrent = await other.patch(`/contacts/${contact.id}`, { first_name: 'Slow' }, withKey(k));
    expect(concurrent.status).toBe(409);
    expect(concurrent.body.error.message).toMatch(/in progress/);
    await db.query('COMMIT');
    expect((await first).status).toBe(200);
    const replayed = await other.patch(`/contacts/${contact.id}`, { first_name: 'Slow' }, withKey(k));
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  });

  it('runs the request again once the stored result is older than the retention period', async () => {
    const k = key();
    const body = { name: 'Retained', stages: [{ name: 'New', type: 'open' }] };
    const first = await stack.api.post('/pipelines', body, withKey(k));
    await db.query(`UPDATE gateway.idempotency_keys SET created_at = now() - interval '25 hours' WHERE idempotency_key = $1`, [k]);
    const later = await stack.api.post('/pipelines', body, withKey(k));
    expect(later.status).toBe(201);
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(later.body.data.id).not.toBe(first.body.data.id);
  });

  it('gives the committed result to a retry after the gateway died between the commit and the response', async () => {
    const gateway = await spawnService('gateway', stack.env);
    try {
      const k = key();
      const body = { name: `Crash ${k}`, stages: [{ name: 'New', type: 'open' }] };
      // Hold inserts into pipelines so the create is in flight in the deals service when the gateway dies.
      await db.query('BEGIN');
      await db.query('LOCK TABLE deals.pipelines IN EXCLUSIVE MODE');
      const doomed = new ApiClient(gateway.url, stack.apiKey).post('/pipelines', body, withKey(k)).catch(() => undefined);
      await waitForLockWaiters(1);
      await gateway.kill9();
      await db.query('COMMIT');
      await doomed;
      await eventually(async () => ((await pipelinesNamed(body.name)).length === 1 ? true : undefined));

      // The dead gateway's claim has not lapsed yet: the retry is told to come back.
      const early = await stack.api.post('/pipelines', body, withKey(k));
      expect(early.status).toBe(409);
      expect(early.body.error.message).toMatch(/in progress/);

      // Once it lapses (2 x RPC_TIMEOUT_MS + 5 s; moved forward here), the retry gets the committed result.
      await db.query(`UPDATE gateway.idempotency_keys SET locked_until = now() WHERE idempotency_key = $1`, [k]);
      const retry = await stack.api.post('/pipelines', body, withKey(k));
      expect(retry.status).toBe(201);
      const [committed] = await pipelinesNamed(body.name);
      expect(retry.body.data.id).toBe(committed);
      expect(retry.body.data.name).toBe(body.name);
      expect(await pipelinesNamed(body.name)).toHaveLength(1);
      const again = await stack.api.post('/pipelines', body, withKey(k));
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(retry.body);
    } finally {
      await gateway.stop();
    }
  });

  it('applies a request once when a retry reaches the service while the first attempt is still running', async () => {
    // A gateway that gives up quickly: the first attempt answers 503 and lets the key go while the deals
    // service is still working on it, so the retry (through a patient gateway) runs beside it.
    const impatient = await stack.startGateway({ RPC_TIMEOUT_MS: '300' });
    const k = key();
    const body = { name: `Race ${k}`, stages: [{ name: 'New', type: 'open' }] };
    await db.query('BEGIN');
    await db.query('LOCK TABLE deals.pipelines IN EXCLUSIVE MODE');
    let released = false;
    try {
      // The premise: the first attempt claimed the key and reached the deals service, where it waits on the
      // table lock, before its gateway gave up with 503. A 503 given before the claim (a gateway that could
      // not reach its key store in time, as on a loaded machine) leaves no claim to lapse and establishes
      // nothing; a client would send it again, and so does this test, until the claim is there.
      const impatientClient = new ApiClient(impatient.url, stack.apiKey);
      const first = await eventually(async () => {
        const answer = await impatientClient.post('/pipelines', body, withKey(k));
        const { rows } = await db.query('SELECT 1 FROM gateway.idempotency_keys WHERE idempotency_key = $1', [k]);
        return rows.length === 1 ? answer : undefined;
      }, 120_000);
      expect(first.status).toBe(503);
      await eventually(async () => {
        const { rows } = await db.query('SELECT 1 FROM gateway.idempotency_keys WHERE idempotency_key = $1 AND locked_until <= clock_timestamp()', [k]);
        return rows.length === 1 ? true : undefined;
      }, 120_000);
      const retry = stack.api.post('/pipelines', body, withKey(k));
      await waitForLockWaiters(2);
      await db.query('COMMIT');
      released = true;
      const settled = await retry;
      const ids = await pipelinesNamed(body.name);
      expect(ids).toHaveLength(1);
      expect(settled.status).toBe(201);
      expect(settled.body.data.id).toBe(ids[0]);
    } finally {
      if (!released) await db.query('ROLLBACK');
    }
    // Longer than its waits together, so a wait that runs out reports what it waited for.
  }, 180_000);
});

import { Client } from 'pg';
import { eventually } from '../support/api-client';
import { spawnService, ServiceProcess } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

/**
 * SIGTERM of a service while it is answering: the request in flight finishes with its real answer,
 * requests that arrive after the service stopped subscribing get the documented 503, and the process
 * exits cleanly only then, with its database still open for the request it was finishing.
 */
describe('service shutdown on SIGTERM', () => {
  let stack: TestStack;
  let contacts: ServiceProcess;
  let db: Client;

  beforeAll(async () => {
    stack = await startStack({ services: [] });
    contacts = await spawnService('contacts', stack.env);
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await contacts.stop();
    await stack.stop();
  });

  it('finishes the request in flight, answers later ones 503, then exits', async () => {
    const created = await stack.api.post('/contacts', { email: `drain-${Date.now()}@example.com` });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;

    // Hold the row so the next update stays in flight inside the service.
    await db.query('BEGIN');
    await db.query('SELECT 1 FROM contacts.contacts WHERE id = $1 FOR UPDATE', [id]);
    const update = stack.api.patch(`/contacts/${id}`, { first_name: 'Finished' });
    await eventually(async () => {
      const { rows } = await db.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND pid <> pg_backend_pid()`,
      );
      return rows.length ? true : undefined;
    });

    let running = true;
    const exited = new Promise<number | null>((resolve) =>
      contacts.child.once('exit', (code) => {
        running = false;
        resolve(code);
      }),
    );
    // Readers keep asking through the whole shutdown; each must get a real answer or the documented 503.
    const seen: Array<{ status: number; code?: string }> = [];
    const readers = Array.from({ length: 4 }, async () => {
      while (running) {
        const res = await stack.api.get(`/contacts/${id}`);
        seen.push({ status: res.status, code: res.body?.error?.code });
      }
    });
    await eventually(async () => (seen.length >= 20 ? true : undefined));
    contacts.child.kill('SIGTERM');
    await eventually(async () => (seen.at(-1)?.status === 503 ? true : undefined));
    expect(contacts.child.exitCode).toBeNull();

    await db.query('COMMIT');
    const answered = await update;
    expect(answered.status).toBe(200);
    expect(answered.body.data.first_name).toBe('Finished');
    expect(await exited).toBe(0);
    await Promise.all(readers);
    const unexpected = seen.filter((r) => !(r.status === 200 || (r.status === 503 && r.code === 'service_unavailable')));
    expect(unexpected).toEqual([]);
    expect(contacts.output()).not.toMatch(/"level":"(error|fatal)"/);
    const { rows } = await db.query('SELECT first_name FROM contacts.contacts WHERE id = $1', [id]);
    expect(rows[0].first_name).toBe('Finished');
  });
});

import { randomBytes } from 'crypto';
import { Receiver, runBuilt, startStack, TestStack, verify } from '@crm/test-support';
import { loadSecretKeyring } from '../src/secrets/secret-keyring';

const CLI = 'apps/webhooks/src/cli.js';
const newKey = () => randomBytes(32).toString('base64');
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Signing secrets at rest: what the table holds, the migration of plain-text rows, rotation of the
 * encryption key with the re-encryption command, and what a wrong key does.
 */
describe('webhook signing secrets at rest', () => {
  let stack: TestStack;
  let receiver: Receiver;
  const k1 = newKey();

  beforeAll(async () => {
    stack = await startStack({
      services: ['webhooks'],
      env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_SECRET_KEYS: `k1:${k1}` },
    });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function subscribe(secret: string): Promise<string> {
    // Only pings reach the receiver: no deals service runs here to emit deal.won.
    const res = await stack.api.post('/webhooks', { name: 'at rest', url: receiver.url, secret, event_types: ['deal.won'] });
    expect(res.status).toBe(201);
    return res.body.data.id;
  }

  async function stored(id: string, column: 'secret' | 'previous_secret' = 'secret'): Promise<string> {
    const [row] = await stack.services.webhooks!.dataSource.query(`SELECT ${column} AS value FROM subscriptions WHERE id = $1`, [id]);
    return row.value;
  }

  /** Pings the subscription and checks the request verifies with `secret`, the way a receiver would. */
  async function pingVerifies(id: string, secret: string): Promise<void> {
    const before = receiver.received('webhook.ping').length;
    const res = await stack.api.post(`/webhooks/${id}/ping`);
    expect(res.status).toBe(200);
    const ping = (await receiver.waitFor(before + 1, 'webhook.ping'))[before];
    expect(verify(secret, ping)).toMatchObject({ type: 'webhook.ping', data: { webhook_id: id } });
  }

  async function restartWebhooks(keys: string): Promise<void> {
    await stack.stopService('webhooks');
    await stack.startService('webhooks', { WEBHOOKS_SECRET_KEYS: keys });
  }

  function cli(command: string, keys: string) {
    return runBuilt(CLI, [command], { ...stack.env, WEBHOOKS_SECRET_KEYS: keys });
  }

  it('stores the secret encrypted with the current key and signs with the secret itself', async () => {
    const secret = newSecret();
    const id = await subscribe(secret);
    const value = await stored(id);
    expect(value).toMatch(/^gcm1:k1:/);
    expect(value).not.toContain(secret);
    expect(value).not.toContain(secret.slice('whsec_'.length, 30));
    await pingVerifies(id, secret);

    // PATCH with a new secret stores it encrypted too, and the replaced one, kept for the overlap.
    const replaced = newSecret();
    expect((await stack.api.patch(`/webhooks/${id}`, { secret: replaced })).status).toBe(200);
    expect(await stored(id)).toMatch(/^gcm1:k1:/);
    expect(await stored(id)).not.toContain(replaced.slice('whsec_'.length, 30));
    expect(await stored(id, 'previous_secret')).toMatch(/^gcm1:k1:/);
    expect(await stored(id, 'previous_secret')).not.toContain(secret.slice('whsec_'.length, 30));
  });

  it('encrypts rows stored in plain text by an earlier version when the migration runs', async () => {
    const secret = newSecret();
    const id = await subscribe(secret);
    // The state before the upgrade: the secret in plain text, the migration not yet applied.
    const db = stack.services.webhooks!.dataSource;
    await db.query(`UPDATE subscriptions SET secret = $2 WHERE id = $1`, [id, secret]);
    await db.query(`DELETE FROM migrations WHERE name = 'EncryptSigningSecrets1764100000000'`);
    await restartWebhooks(`k1:${k1}`);
    expect(await stored(id)).toMatch(/^gcm1:k1:/);
    expect(await stored(id)).not.toContain(secret.slice('whsec_'.length, 30));
    await pingVerifies(id, secret);
  });

  it('rotates the encryption key: old secrets keep working, reencrypt moves them all, the old key can go', async () => {
    const before = newSecret();
    const oldId = await subscribe(before);
    const k2 = newKey();
    await restartWebhooks(`k2:${k2},k1:${k1}`);
    await pingVerifies(oldId, before);
    const after = newSecret();
    const newId = await subscribe(after);
    expect(await stored(newId)).toMatch(/^gcm1:k2:/);
    expect(await stored(oldId)).toMatch(/^gcm1:k1:/);

    const status = await cli('status', `k2:${k2},k1:${k1}`);
    expect(status.status).toBe(0);
    expect(status.stdout).toMatch(/^k1\t\d+$/m);
    const run = await cli('reencrypt', `k2:${k2},k1:${k1}`);
    expect({ status: run.status, stderr: run.stderr }).toEqual({
      status: 0,
      stderr: expect.stringMatching(/^re-encrypted \d+ signing secret\(s\) with key 'k2'\n$/),
    });
    expect(run.stdout).toMatch(/^k2\t\d+\n$/);
    for (const output of [status.stdout, status.stderr, run.stdout, run.stderr]) {
      for (const material of [k1, k2, before, after]) expect(output).not.toContain(material);
    }
    expect(await stored(oldId)).toMatch(/^gcm1:k2:/);
    const [{ left }] = await stack.services.webhooks!.dataSource.query(
      `SELECT count(*)::int AS left FROM subscriptions WHERE secret NOT LIKE 'gcm1:k2:%' OR previous_secret NOT LIKE 'gcm1:k2:%'`,
    );
    expect(left).toBe(0);

    await restartWebhooks(`k2:${k2}`);
    await pingVerifies(oldId, before);
    await pingVerifies(newId, after);
  });

  it('fails an operation on a secret encrypted with a key this replica lacks, sending nothing', async () => {
    const secret = newSecret();
    const id = await subscribe(secret);
    // As written by a replica already given a newer key than this one.
    const sealed = loadSecretKeyring({ WEBHOOKS_SECRET_KEYS: `k3:${newKey()}` }).seal(id, secret);
    await stack.services.webhooks!.dataSource.query(`UPDATE subscriptions SET secret = $2, status = 'paused' WHERE id = $1`, [id, sealed]);
    const before = receiver.requests.length;
    const ping = await stack.api.post(`/webhooks/${id}/ping`);
    expect(ping.status).toBe(500);
    expect(ping.body.error.code).toBe('internal_error');
    expect(receiver.requests.length).toBe(before);
    expect((await stack.api.delete(`/webhooks/${id}`)).status).toBe(204);
  });

  it('refuses to start with a wrong or missing key, naming the variable and the key id but no key material', async () => {
    const current = (await stack.services.webhooks!.dataSource.query(`SELECT secret FROM subscriptions LIMIT 1`))[0].secret as string;
    const keyId = current.split(':')[1];
    await stack.stopService('webhooks');
    const wrong = newKey();
    await expect(stack.startService('webhooks', { WEBHOOKS_SECRET_KEYS: `${keyId}:${wrong}` })).rejects.toThrow(
      new RegExp(`does not decrypt with key '${keyId}' of WEBHOOKS_SECRET_KEYS`),
    );
    await expect(stack.startService('webhooks', { WEBHOOKS_SECRET_KEYS: `other:${wrong}` })).rejects.toThrow(
      `is encrypted with key '${keyId}', which WEBHOOKS_SECRET_KEYS does not list (it lists 'other')`,
    );
    const exited = await runBuilt('apps/webhooks/src/main.js', [], { ...stack.env, WEBHOOKS_SECRET_KEYS: `${keyId}:${wrong}` });
    expect(exited.status).toBe(1);
    expect(exited.stderr.trim()).toMatch(
      new RegExp(`^webhooks: cannot start: the signing secret of whk_\\w+ does not decrypt with key '${keyId}' of WEBHOOKS_SECRET_KEYS`),
    );
    expect(exited.stderr).not.toContain(wrong);
    const unset = await runBuilt('apps/webhooks/src/main.js', [], { ...stack.env, WEBHOOKS_SECRET_KEYS: '' });
    expect(unset.stderr.trim()).toMatch(/^webhooks: cannot start: WEBHOOKS_SECRET_KEYS is not set/);
  });
});

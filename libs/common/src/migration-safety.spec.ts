import { MigrationInterface, QueryRunner } from 'typeorm';
import { openDatabase } from './database';
import { LOCK_NOT_AVAILABLE, MIGRATION_LOCK_TIMEOUT_MS, updateInBatches, withLockTimeout } from './migration-safety';
import { throwawayDatabase } from './throwaway-database.spec-support';

jest.setTimeout(120_000);

/** What each migration saw, in the order they ran. */
const seen: { name: string; lockTimeout: string }[] = [];
let failuresLeft = 0;

const lockTimeout = async (q: QueryRunner): Promise<string> => (await q.query(`SHOW lock_timeout`))[0].lock_timeout;

/** A released migration as they were written: it sets nothing, so what it sees is the run's setting. */
class Released1700000000000 implements MigrationInterface {
  name = 'Released1700000000000';
  async up(q: QueryRunner): Promise<void> {
    seen.push({ name: this.name, lockTimeout: await lockTimeout(q) });
    await q.query(`CREATE TABLE items (id bigint PRIMARY KEY, label text)`);
    await q.query(`INSERT INTO items SELECT g, NULL FROM generate_series(1, 1200) g`);
  }
  async down(): Promise<void> {}
}

/** One that sets its own and RESETs it: the connection's start-up value comes back, not PostgreSQL's 0. */
class Resets1700000000100 implements MigrationInterface {
  name = 'Resets1700000000100';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET lock_timeout = '1s'`);
    await q.query(`RESET lock_timeout`);
    seen.push({ name: this.name, lockTimeout: await lockTimeout(q) });
  }
  async down(): Promise<void> {}
}

/** One that loses its lock wait the first `failuresLeft` times it runs. */
class LosesItsLock1700000000200 implements MigrationInterface {
  name = 'LosesItsLock1700000000200';
  async up(q: QueryRunner): Promise<void> {
    seen.push({ name: this.name, lockTimeout: await lockTimeout(q) });
    await q.query(`ALTER TABLE items ADD COLUMN flag boolean`);
    if (failuresLeft-- > 0) throw Object.assign(new Error('canceling statement due to lock timeout'), { code: LOCK_NOT_AVAILABLE });
  }
  async down(): Promise<void> {}
}

/** A backfill outside a transaction, in batches of 500. */
class Backfills1700000000300 implements MigrationInterface {
  name = 'Backfills1700000000300';
  transaction = false;
  batches: number[] = [];
  async up(q: QueryRunner): Promise<void> {
    await withLockTimeout(q, 2000, async () => {
      seen.push({ name: this.name, lockTimeout: await lockTimeout(q) });
    });
    seen.push({ name: `${this.name} after`, lockTimeout: await lockTimeout(q) });
    const progress: number[] = [];
    await updateInBatches(q, 'items', `label = 'item ' || id`, 'label IS NULL', { batch: 500, progress: (n) => progress.push(n) });
    seen.push({ name: `${this.name} progress ${progress.join(',')}`, lockTimeout: '' });
  }
  async down(): Promise<void> {}
}

describe('migrate()', () => {
  const db = throwawayDatabase();
  afterAll(() => db.drop());

  it('runs every migration with lock_timeout set, starts again a run that lost a lock wait, and backfills in batches', async () => {
    failuresLeft = 2;
    const ds = await openDatabase({
      url: db.url,
      schema: 'safety',
      entities: [],
      migrations: [Released1700000000000, Resets1700000000100, LosesItsLock1700000000200, Backfills1700000000300],
      poolSize: 1,
    });
    try {
      const expected = `${MIGRATION_LOCK_TIMEOUT_MS / 1000}s`;
      expect(seen).toEqual([
        { name: 'Released1700000000000', lockTimeout: expected },
        { name: 'Resets1700000000100', lockTimeout: expected },
        { name: 'LosesItsLock1700000000200', lockTimeout: expected },
        { name: 'LosesItsLock1700000000200', lockTimeout: expected },
        { name: 'LosesItsLock1700000000200', lockTimeout: expected },
        { name: 'Backfills1700000000300', lockTimeout: '2s' },
        { name: 'Backfills1700000000300 after', lockTimeout: expected },
        { name: 'Backfills1700000000300 progress 500,1000,1200,1200', lockTimeout: '' },
      ]);
      expect((await ds.query(`SELECT name FROM safety.migrations ORDER BY id`)).map((r: { name: string }) => r.name)).toEqual([
        'Released1700000000000',
        'Resets1700000000100',
        'LosesItsLock1700000000200',
        'Backfills1700000000300',
      ]);
      expect(await ds.query(`SELECT count(*)::int AS n FROM safety.items WHERE label IS NULL`)).toEqual([{ n: 0 }]);
      // The application's own connections keep PostgreSQL's default.
      expect(await ds.query(`SHOW lock_timeout`)).toEqual([{ lock_timeout: '0' }]);
    } finally {
      await ds.destroy();
    }
  });
});

import { MigrationInterface, QueryRunner } from 'typeorm';
import { MigrationClass, migrationName, migrationProblems, migrationTimestamp, RELEASED_UP_TO } from './migration-checks';
import { SERVICES } from './schema-snapshot';

/**
 * Every migration newer than the last release keeps the rules of docs/deployment.md ("Upgrading"):
 * CONCURRENTLY index builds outside a transaction, a lock_timeout, batched backfills. Released migrations
 * never change; the migration run gives them a lock_timeout from outside (migrate() in @crm/common).
 */
describe('migration safety', () => {
  for (const [service, { migrations }] of Object.entries(SERVICES)) {
    const fresh = (migrations as MigrationClass[]).filter((m) => migrationTimestamp(m) > RELEASED_UP_TO);
    describe(service, () => {
      it('has new migrations to check, or says so', () => {
        expect(fresh.map(migrationName).every((n) => n.length > 0)).toBe(true);
      });
      for (const m of fresh) {
        it(`${migrationName(m)} builds indexes CONCURRENTLY, sets lock_timeout and batches its updates`, () => {
          expect(migrationProblems(m)).toEqual([]);
        });
      }
    });
  }

  it('refuses a migration that locks a table', () => {
    class LockingMigration1799000000000 implements MigrationInterface {
      name = 'LockingMigration1799000000000';
      async up(q: QueryRunner): Promise<void> {
        await q.query(`CREATE INDEX contacts_nickname ON contacts (nickname)`);
        await q.query(`UPDATE contacts SET nickname = first_name WHERE nickname IS NULL`);
      }
      async down(): Promise<void> {}
    }
    expect(migrationProblems(LockingMigration1799000000000)).toEqual([
      'builds or drops an index without CONCURRENTLY',
      'sets no lock_timeout',
      'updates a whole table in one statement: UPDATE contacts SET nickname = first_name WHERE nickname IS NULL…',
    ]);
  });

  it('lets a migration index a table it creates, in its transaction', () => {
    class NewTable1799000000050 implements MigrationInterface {
      name = 'NewTable1799000000050';
      async up(q: QueryRunner): Promise<void> {
        await q.query(`SET LOCAL lock_timeout = '5s'`);
        await q.query(`CREATE TABLE notes (id text PRIMARY KEY, created_at timestamptz NOT NULL)`);
        await q.query(`CREATE INDEX notes_created_at ON notes (created_at)`);
      }
      async down(): Promise<void> {}
    }
    expect(migrationProblems(NewTable1799000000050)).toEqual([]);
  });

  it('refuses a CONCURRENTLY build inside a transaction', () => {
    class InTransaction1799000000100 implements MigrationInterface {
      name = 'InTransaction1799000000100';
      async up(q: QueryRunner): Promise<void> {
        await q.query(`SET lock_timeout = '5s'`);
        await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS contacts_nickname ON contacts (nickname)`);
      }
      async down(): Promise<void> {}
    }
    expect(migrationProblems(InTransaction1799000000100)).toEqual(['builds an index CONCURRENTLY but does not set transaction = false']);
  });

  it('accepts a safe one: CONCURRENTLY outside a transaction, lock_timeout, a batched backfill, an UPDATE in a function body', () => {
    class Safe1799000000200 implements MigrationInterface {
      name = 'Safe1799000000200';
      transaction = false;
      async up(q: QueryRunner): Promise<void> {
        await q.query(`SET lock_timeout = '5s'`);
        await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS contacts_nickname ON contacts (nickname)`);
        await q.query(`UPDATE contacts SET nickname = first_name WHERE id IN (SELECT id FROM contacts WHERE nickname IS NULL LIMIT 5000)`);
        await q.query(`CREATE OR REPLACE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $fn$ BEGIN UPDATE totals SET n = n + 1; RETURN NEW; END $fn$`);
      }
      async down(): Promise<void> {}
    }
    expect(migrationProblems(Safe1799000000200)).toEqual([]);
  });
});

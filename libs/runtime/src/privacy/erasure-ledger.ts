import type { TableRetention } from '@crm/common';
import type { DataSource, EntityManager, MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each store of a service did for each erasure, written in the transaction that did it
 * (docs/privacy.md, "Rules"). A step asked again (its caller was killed before it kept the answer, or this
 * service was killed halfway) skips the stores already done and answers what they did then, so the
 * receipt counts every row once, whoever crashed when.
 */
export class CreateErasureLedger1768100000100 implements MigrationInterface {
  name = 'CreateErasureLedger1768100000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`
      CREATE TABLE erasure_ledger (
        erasure_id text NOT NULL,
        store text NOT NULL,
        deleted integer NOT NULL,
        redacted integer NOT NULL,
        positions text[],
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (erasure_id, store)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE erasure_ledger`);
  }
}

/** The migrations every service that takes part in erasures runs. */
export const ERASURE_LEDGER_MIGRATIONS = [CreateErasureLedger1768100000100];

/** What becomes of the ledger over time (docs/deployment.md, "Retention"). */
export const ERASURE_LEDGER_TABLES: TableRetention[] = [
  { table: 'erasure_ledger', kept: 'one row per erasure and store (counts and event-log positions, no personal data); grows with erasure requests only' },
];

/** Why the ledger needs no erasure of its own. */
export const ERASURE_LEDGER_DECLARED = { erasure_ledger: 'counts and event-log positions per erasure, no personal data' } as const;

export interface LedgerEntry {
  deleted: number;
  redacted: number;
  positions?: string[];
}

/**
 * Runs `work` once per erasure and store: in one transaction with the ledger row that records it, or not
 * at all when the ledger has the row already (its recorded result is answered instead).
 */
export async function ledgered(
  dataSource: DataSource,
  erasureId: string,
  store: string,
  work: (m: EntityManager) => Promise<LedgerEntry>,
): Promise<LedgerEntry> {
  return dataSource.transaction(async (m) => {
    // Two runs of one erasure never overlap (the erasure's lease), but a lock makes it true regardless.
    await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm.erasure.${erasureId}.${store}`]);
    const [done]: Array<{ deleted: number; redacted: number; positions: string[] | null }> = await m.query(
      `SELECT deleted, redacted, positions FROM erasure_ledger WHERE erasure_id = $1 AND store = $2`,
      [erasureId, store],
    );
    if (done) return { deleted: done.deleted, redacted: done.redacted, ...(done.positions ? { positions: done.positions } : {}) };
    const result = await work(m);
    await m.query(`INSERT INTO erasure_ledger (erasure_id, store, deleted, redacted, positions) VALUES ($1, $2, $3, $4, $5)`, [
      erasureId,
      store,
      result.deleted,
      result.redacted,
      result.positions ?? null,
    ]);
    return result;
  });
}

import { AsyncLocalStorage } from 'async_hooks';
import { EntityManager, MigrationInterface, QueryRunner } from 'typeorm';

/** The request being handled under a client's Idempotency-Key, and this attempt at it. */
export interface OutcomeScope {
  ref: string;
  attempt: string;
}

export const requestOutcomeScope = new AsyncLocalStorage<OutcomeScope>();

/** Another attempt at the same Idempotency-Key committed first; this one must not apply its change. */
export class OutcomeAlreadyRecorded extends Error {
  constructor() {
    super('another attempt at this Idempotency-Key committed first');
  }
}

/**
 * Marks, inside the transaction of a change, that the client's keyed request has been applied. It commits
 * or rolls back with the change, so a retry can always tell whether the change happened, even when the
 * reply was lost. A concurrent attempt at the same key blocks here until the first commits, then fails.
 */
export async function markRequestApplied(manager: EntityManager): Promise<void> {
  const scope = requestOutcomeScope.getStore();
  if (!scope) return;
  const rows: unknown[] = await manager.query(
    `INSERT INTO request_outcomes (ref, attempt) VALUES ($1, $2)
     ON CONFLICT (ref) DO UPDATE SET attempt = EXCLUDED.attempt WHERE request_outcomes.attempt = EXCLUDED.attempt
     RETURNING 1`,
    [scope.ref, scope.attempt],
  );
  if (rows.length === 0) throw new OutcomeAlreadyRecorded();
}

/**
 * Records the reply of the client's keyed request inside the transaction of its change, for a change whose
 * reply is known before it commits (a batch write): a crash between the commit and the interceptor's own
 * recording of the reply then still leaves a retry the reply to replay, not only the fact it was applied.
 */
export async function recordReplyWithin(manager: EntityManager, reply: unknown): Promise<void> {
  const scope = requestOutcomeScope.getStore();
  if (!scope) return;
  const rows: unknown[] = await manager.query(
    `INSERT INTO request_outcomes (ref, attempt, reply) VALUES ($1, $2, $3)
     ON CONFLICT (ref) DO UPDATE SET reply = EXCLUDED.reply WHERE request_outcomes.attempt = EXCLUDED.attempt
     RETURNING 1`,
    [scope.ref, scope.attempt, JSON.stringify({ value: reply })],
  );
  if (rows.length === 0) throw new OutcomeAlreadyRecorded();
}

/** Each service's record of keyed requests it has applied, with the reply it gave. */
export class CreateRequestOutcomes1763900000200 implements MigrationInterface {
  name = 'CreateRequestOutcomes1763900000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE request_outcomes (
        ref text PRIMARY KEY,
        attempt text NOT NULL,
        reply jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX request_outcomes_created_at ON request_outcomes (created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE request_outcomes`);
  }
}

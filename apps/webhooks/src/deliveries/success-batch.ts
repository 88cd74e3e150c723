import { DataSource } from 'typeorm';

/** A successful attempt to record, and the id of the next attempt to prepare in the same call (null: none). */
export interface SuccessRecord {
  deliveryId: string;
  subscriptionId: string;
  leaseToken: string;
  cursorRevision: number;
  eventPosition: number;
  httpStatus: number | null;
  durationMs: number;
  nextDeliveryId: string | null;
}

/** What webhook_record_success answers: whether the turn goes on, and the next attempt when one was asked for. */
export interface SuccessOutcome {
  go_on: boolean;
  next?: unknown;
}

/** Most successes one statement records. */
const MAX_BATCH = 500;
/** Batches written at once by default. */
const WRITERS = 4;

/**
 * The successes of a batch, each through webhook_record_success (the same bookkeeping as one at a time), in
 * one statement: one round trip and one commit for the batch. The rows are locked in subscription id order
 * (the inner ORDER BY, kept by OFFSET 0, runs before the calls), as the lease renewal locks them, so two
 * batches never wait on each other in a cycle.
 */
const RECORD_SUCCESSES = `SELECT r.delivery, webhook_record_success(r.delivery, r.subscription, r.token, r.revision, r.position, r.http_status, r.duration_ms, r.next, $9) AS outcome
  FROM (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::bigint[], $6::int[], $7::int[], $8::text[])
          AS u(delivery, subscription, token, revision, position, http_status, duration_ms, next)
        ORDER BY u.subscription OFFSET 0) r`;

const RECORD_SUCCESS = `SELECT webhook_record_success($1, $2, $3, $4, $5, $6, $7, $8, $9) AS outcome`;

interface Waiting {
  record: SuccessRecord;
  resolve: (outcome: SuccessOutcome) => void;
  reject: (err: Error) => void;
}

/**
 * Records successful attempts across subscriptions in batches: each subscription's turn asks for its own
 * success and waits for the answer (its events still go out one at a time, in order), while the successes
 * that arrive while batches are being written go into the next one. Nothing waits to make a batch: a
 * success is written at once while fewer than `writers` batches are under way, and the batch grows with the load, so at one delivery a second it is
 * one statement per delivery, as before, and at thousands a few statements a second carry them all.
 * A batch that fails (a lock cycle with a claim after a lease ran out, a lost connection) is recorded again
 * one success at a time, so one bad row costs only its own turn.
 */
export class SuccessBatch {
  private queue: Waiting[] = [];
  private writing = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly leaseMs: number,
    /**
     * Batches written at once, each on a connection of its own: the database works on several in parallel,
     * and the batches grow only once that many are under way.
     */
    private readonly writers = WRITERS,
  ) {}

  record(record: SuccessRecord): Promise<SuccessOutcome> {
    return new Promise<SuccessOutcome>((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      if (this.writing < this.writers) void this.write();
    });
  }

  private async write(): Promise<void> {
    this.writing++;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH);
        if (batch.length === 1) await this.one(batch[0]);
        else await this.many(batch);
      }
    } finally {
      this.writing--;
    }
  }

  private async many(batch: Waiting[]): Promise<void> {
    const column = <T>(pick: (r: SuccessRecord) => T) => batch.map((w) => pick(w.record));
    let rows: Array<{ delivery: string; outcome: SuccessOutcome }>;
    try {
      rows = await this.dataSource.query(RECORD_SUCCESSES, [
        column((r) => r.deliveryId),
        column((r) => r.subscriptionId),
        column((r) => r.leaseToken),
        column((r) => r.cursorRevision),
        column((r) => r.eventPosition),
        column((r) => r.httpStatus),
        column((r) => r.durationMs),
        column((r) => r.nextDeliveryId),
        this.leaseMs,
      ]);
    } catch {
      for (const waiting of batch) await this.one(waiting);
      return;
    }
    const outcomes = new Map(rows.map((row) => [row.delivery, row.outcome]));
    for (const { record, resolve, reject } of batch) {
      const outcome = outcomes.get(record.deliveryId);
      if (outcome) resolve(outcome);
      else reject(new Error(`no outcome recorded for delivery ${record.deliveryId}`));
    }
  }

  private async one({ record: r, resolve, reject }: Waiting): Promise<void> {
    try {
      const [{ outcome }]: { outcome: SuccessOutcome }[] = await this.dataSource.query(RECORD_SUCCESS, [
        r.deliveryId,
        r.subscriptionId,
        r.leaseToken,
        r.cursorRevision,
        r.eventPosition,
        r.httpStatus,
        r.durationMs,
        r.nextDeliveryId,
        this.leaseMs,
      ]);
      resolve(outcome);
    } catch (err) {
      reject(err as Error);
    }
  }
}

import { DomainError, ErrorCode, Logger, ServiceConfig } from '@crm/common';
import { namedOperationRepliesWithSecret, secretNotReplayed } from '@crm/contracts';
import { OutcomeAlreadyRecorded, requestOutcomeScope } from '@crm/messaging';
import { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { DataSource } from 'typeorm';
import { PeriodicTask } from './periodic-task';
import { RequestStep, ServiceRequest } from './service-request.interceptor';

/** The gateway sends a hex SHA-256 digest; anything else is not ours and is ignored. */
const REF_SHAPE = /^[0-9a-f]{64}$/;
const PURGE_EVERY_MS = 60 * 60 * 1000;
const SETTLE_WAIT_MS = 2000;
/** About 30 s in all: long enough for a PostgreSQL restart or fail-over. */
const RECORD_RETRY_DELAYS_MS = [100, 250, 500, 1000, 2000, 4000, 8000, 15000];

interface StoredOutcome {
  /** `withheld`: the reply carried a one-time secret, which is not kept (in clear or otherwise). */
  reply: { value?: unknown; withheld?: true } | null;
}

/**
 * Makes a keyed client request (the gateway passes `ctx.idempotency_ref` for an Idempotency-Key) apply at
 * most once in this service, however often it arrives: the change marks the request applied in its own
 * transaction (OutboxService), the reply is recorded when the handler returns, and a later attempt gets
 * that reply instead of running again. This covers the gateway dying after the commit: its retry lands
 * here and finds the result.
 */
export class RequestOutcomes implements RequestStep, OnModuleInit, OnModuleDestroy {
  private readonly purges: PeriodicTask;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: ServiceConfig,
    private readonly logger: Logger,
  ) {
    this.purges = new PeriodicTask(
      PURGE_EVERY_MS,
      () => this.purge(),
      (err) => this.logger.warn({ err: err.message }, 'could not purge expired request outcomes'),
      {
        firstRun: 'after-interval',
      },
    );
  }

  onModuleInit(): void {
    this.purges.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.purges.stop();
  }

  around({ pattern, payload }: ServiceRequest, next: () => Promise<unknown>): Promise<unknown> {
    const ref = payload?.ctx?.idempotency_ref;
    if (typeof ref !== 'string' || !REF_SHAPE.test(ref)) return next();
    return this.handleOnce(ref, next, namedOperationRepliesWithSecret(pattern));
  }

  /** `secret`: the operation answers with a one-time secret (a webhook's signing secret), never recorded. */
  private async handleOnce(ref: string, next: () => Promise<unknown>, secret: boolean): Promise<unknown> {
    const earlier = await this.settled(ref);
    if (earlier) return this.replay(earlier);
    const attempt = randomUUID();
    let reply: unknown;
    try {
      // The handler runs inside the scope, so it and the transaction it opens see it.
      reply = await requestOutcomeScope.run({ ref, attempt }, next);
    } catch (err) {
      if (!(err instanceof OutcomeAlreadyRecorded)) throw err;
      const winner = await this.settled(ref);
      if (!winner) throw err;
      return this.replay(winner);
    }
    // A secret is shown once: kept here, it would sit in clear beside its sealed copy for a day.
    const recorded: StoredOutcome['reply'] = secret ? { withheld: true } : { value: reply };
    await this.recordReply(ref, attempt, recorded).catch(() => {
      // The database blipped just after the commit: answer now, and keep trying to record the reply
      // in the background, so a retry replays it instead of being told the response was lost.
      void this.recordReplyLater(ref, attempt, recorded);
    });
    return reply;
  }

  private async recordReply(ref: string, attempt: string, recorded: StoredOutcome['reply']): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO request_outcomes (ref, attempt, reply) VALUES ($1, $2, $3)
       ON CONFLICT (ref) DO UPDATE SET reply = EXCLUDED.reply WHERE request_outcomes.attempt = EXCLUDED.attempt`,
      [ref, attempt, JSON.stringify(recorded)],
    );
  }

  private async recordReplyLater(ref: string, attempt: string, reply: StoredOutcome['reply']): Promise<void> {
    let lastError: unknown;
    for (const delayMs of RECORD_RETRY_DELAYS_MS) {
      await new Promise((resolve) => setTimeout(resolve, delayMs).unref());
      try {
        return await this.recordReply(ref, attempt, reply);
      } catch (err) {
        lastError = err;
      }
    }
    this.logger.error({ err: lastError }, 'could not record the reply of a keyed request');
  }

  private async recorded(ref: string): Promise<StoredOutcome | undefined> {
    const rows: StoredOutcome[] = await this.dataSource.query(`SELECT reply FROM request_outcomes WHERE ref = $1`, [ref]);
    return rows[0];
  }

  /**
   * The recorded outcome, waiting a moment when the change is committed but its reply not yet recorded
   * (another attempt is finishing); null reply after that means that attempt's process stopped.
   */
  private async settled(ref: string): Promise<StoredOutcome | undefined> {
    const deadline = Date.now() + SETTLE_WAIT_MS;
    for (;;) {
      const outcome = await this.recorded(ref);
      if (!outcome || outcome.reply || Date.now() >= deadline) return outcome;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private replay(outcome: StoredOutcome): unknown {
    if (outcome.reply?.withheld) throw secretNotReplayed();
    if (outcome.reply) return outcome.reply.value;
    // Applied, but the process stopped between the commit and recording the reply.
    throw new DomainError(
      ErrorCode.Conflict,
      'The request first sent with this Idempotency-Key was applied, but its response was not recorded; fetch the resource to see the result.',
    );
  }

  private async purge(): Promise<void> {
    await this.dataSource.query(`DELETE FROM request_outcomes WHERE created_at < now() - make_interval(hours => $1)`, [this.config.idempotencyTtlHours]);
  }
}

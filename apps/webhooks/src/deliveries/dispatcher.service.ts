import { contextFrom, IdPrefix, inSpan, Logger, newId, SpanKind, traceparentOf, tracerFor } from '@crm/common';
import { EventType, WebhookDisabledData } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'crypto';
import { setMaxListeners } from 'events';
import { DataSource, EntityManager } from 'typeorm';
import { WEBHOOKS_SETTINGS, WebhooksSettings } from '../config/webhooks.settings';
import { postJson, SendResult } from '../endpoints/endpoint-client';
import { OriginGate } from '../endpoints/origin-gate';
import { signedHeaders } from '../endpoints/signing';
import { SigningSecrets } from '../secrets/signing-secrets';
import { DeliveryMetrics } from './delivery-metrics';
import { DispatchSignal } from './dispatch-signal';
import { EventScreen } from './event-screen';
import { ScreenLoop } from './screen-loop';
import { SuccessBatch } from './success-batch';
import { afterFailure } from './retry-policy';

/** The one attempt a replica is about to make, as fixed inside the transaction that recorded it. */
interface PreparedAttempt {
  subscriptionId: string;
  leaseToken: string;
  cursorRevision: number;
  url: string;
  secrets: string[];
  deliveryId: string;
  eventId: string;
  eventPosition: number;
  body: string;
  traceContext: string | null;
}

const tracer = tracerFor('webhooks');

/** A subscription whose lease this replica holds, locked until commit, with what recording a failure needs. */
const LOCKED_SUBSCRIPTION = `SELECT id, status, cursor_revision, retry_count, failure_count
  FROM subscriptions WHERE id = $1 AND lease_token = $2 FOR UPDATE`;

/**
 * The delivery bookkeeping commits without waiting for its WAL flush: two such commits per delivered event
 * would otherwise bound a subscription, whose events go out one at a time, to what the disk can flush.
 * What a database crash can take is the record of the last fraction of a second of attempts, so those
 * events are sent again: the at-least-once promise receivers already de-duplicate for. Nothing is lost:
 * the events themselves and every API write are committed durably.
 */
async function relaxedCommit(m: EntityManager): Promise<void> {
  await m.query(`SET LOCAL synchronous_commit = off`);
}

/** What webhook_prepare_attempt answers: the leased subscription's address and secrets, and its next event. */
interface AttemptRow {
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_valid: boolean;
  cursor_revision: number;
  position: number;
  event_id: string;
  body: string;
  trace_context: string | null;
}

/** What webhook_prepare_attempt answers for a filtered subscription whose next event has not been tested yet (see EventScreen). */
interface ScreenFirst {
  screen: true;
}

const mustScreen = (row: AttemptRow | ScreenFirst | null | undefined): row is ScreenFirst => !!row && 'screen' in row;

/** What webhook_claim answers for each subscription it leased: the id its first attempt was recorded under, and that attempt. */
interface ClaimedSubscription {
  id: string;
  delivery: string;
  attempt: AttemptRow | ScreenFirst | null;
}

interface SubscriptionRow {
  id: string;
  status: string;
  cursor_revision: number;
  retry_count: number;
  failure_count: number;
}

/**
 * Pushes events to subscriptions. Each replica claims due subscriptions with a lease (taken with
 * FOR UPDATE SKIP LOCKED, so two replicas never claim the same one) and sends each claimed
 * subscription its events one at a time, in position order. A subscription occupies at most one of
 * the replica's `maxConcurrency` slots, so a slow endpoint delays only itself.
 *
 * Leases are short (LEASE_MS) and renewed every LEASE_RENEW_MS while held, however long a delivery
 * takes: if the replica dies, another takes its subscriptions over within seconds, instead of after
 * the longest possible delivery.
 *
 * Nothing polls: a replica looks for work when woken (DispatchSignal: new events, a subscription resumed
 * or replayed, on this replica or another), when one of its turns ends, and, after a look that found
 * nothing, at the moment the next retry or foreign lease falls due, or after `dispatchIntervalMs` at
 * the latest in case a wake-up was lost.
 */
const LEASE_MS = 10_000;
const LEASE_RENEW_MS = 3_000;
/** After a failed look (the database unreachable), the next one. */
const RETRY_LOOK_MS = 1_000;
/** The shortest wait for a subscription due now that the look could not lease (another replica is claiming it). */
const MIN_WAIT_MS = 100;

/**
 * How long until the next subscription with events to send may be claimed: its retry is due or another
 * replica's lease on it runs out (that replica died, or is slow to renew). Null when none waits.
 */
const NEXT_DUE_MS = `SELECT extract(epoch FROM min(GREATEST(coalesce(s.next_attempt_at, now()), coalesce(s.lease_expires_at, now())) - now())) * 1000 AS due_ms
  FROM subscriptions s
  WHERE s.status = 'active' AND s.id <> ALL ($1::text[])
    AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.position > s.bookmark AND (s.event_types IS NULL OR e.type = ANY (s.event_types)))`;

@Injectable()
export class DispatcherService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly inFlight = new Map<string, Promise<void>>();
  /** The lease token of each subscription this replica holds. */
  private readonly held = new Map<string, string>();
  private readonly abort = new AbortController();
  private wake?: NodeJS.Timeout;
  private renewTimer?: NodeJS.Timeout;
  private claiming?: Promise<void>;
  private claimAgain = false;
  private stopped = false;
  /** Filtered subscriptions are screened by passes of their own, beside the claims (see ScreenLoop). */
  private readonly screening: ScreenLoop;
  /** Successes of all turns, recorded in batches. */
  private readonly successes: SuccessBatch;
  /** At most `maxPerOrigin` requests at once to one endpoint origin, over its own keep-alive connections. */
  private readonly origins: OriginGate;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly signal: DispatchSignal,
    private readonly secrets: SigningSecrets,
    private readonly metrics: DeliveryMetrics,
    private readonly screen: EventScreen,
    @Inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.successes = new SuccessBatch(dataSource, LEASE_MS);
    this.origins = new OriginGate(settings.maxPerOrigin);
    // On failure the look for the next due subscription (NEXT_DUE_MS) still counts the waiting ones, and wakes both again.
    this.screening = new ScreenLoop(
      () => this.screen.screenWaiting(() => this.claim()),
      () => this.claim(),
      (err) => this.logger.warn({ err: err.message }, 'could not screen filtered webhook subscriptions; will retry'),
    );
  }

  onApplicationBootstrap(): void {
    // Every send in flight listens for the shutdown; maxConcurrency bounds them, Node's default of 10 does not.
    setMaxListeners(this.settings.maxConcurrency + 10, this.abort.signal);
    this.signal.onKick(() => this.kick());
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.wake);
    clearInterval(this.renewTimer);
    this.abort.abort();
    await this.screening.stop();
    await this.claiming?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Screens the filtered subscriptions waiting for their next event, and looks for due work: now, or right after the pass or look under way. */
  kick(): void {
    if (this.stopped) return;
    this.screening.kick();
    this.claim();
  }

  /** Looks for due work now, or right after the look under way. */
  private claim(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimAndStart()
      .catch((err: Error) => {
        this.logger.warn({ err: err.message }, 'webhook dispatcher could not claim work; will retry');
        this.wakeIn(RETRY_LOOK_MS);
      })
      .finally(() => {
        this.claiming = undefined;
        if (this.claimAgain) {
          this.claimAgain = false;
          this.claim();
        }
      });
  }

  /**
   * Leases due subscriptions and starts a turn for each with its first attempt, prepared in the same call
   * (webhook_claim). This replica's own turns still under way are left out: a subscription released just
   * now may be due again before its turn has finished here.
   */
  private async claimAndStart(): Promise<void> {
    const free = this.settings.maxConcurrency - this.inFlight.size;
    if (free <= 0) return;
    const token = randomUUID();
    const deliveryIds = Array.from({ length: free }, () => newId(IdPrefix.Delivery));
    const [{ claimed }]: { claimed: ClaimedSubscription[] }[] = await this.dataSource.query(`SELECT webhook_claim($1, $2, $3, $4, $5) AS claimed`, [
      free,
      token,
      deliveryIds,
      [...this.inFlight.keys()],
      LEASE_MS,
    ]);
    if (!claimed.length) return this.sleepUntilDue();
    for (const { id, delivery, attempt } of claimed) {
      this.held.set(id, token);
      const turn = this.turn(id, token, attempt ? { deliveryId: delivery, row: attempt } : undefined)
        .catch((err: Error) => this.logger.error({ err: err.message, webhook_id: id }, 'webhook delivery turn failed'))
        .finally(() => {
          this.held.delete(id);
          this.inFlight.delete(id);
          if (!this.held.size) {
            clearInterval(this.renewTimer);
            this.renewTimer = undefined;
          }
          this.kick();
        });
      this.inFlight.set(id, turn);
    }
    // Renewed only while this replica holds leases, so an idle replica has no timer running for them.
    this.renewTimer ??= setInterval(() => void this.renewLeases(), LEASE_RENEW_MS);
  }

  /** Nothing to claim now: the next look is when the next retry or foreign lease falls due, or the fallback interval. */
  private async sleepUntilDue(): Promise<void> {
    const [{ due_ms }]: { due_ms: number | null }[] = await this.dataSource.query(NEXT_DUE_MS, [[...this.inFlight.keys()]]);
    const fallback = this.settings.dispatchIntervalMs;
    this.wakeIn(due_ms === null ? fallback : Math.min(fallback, Math.max(MIN_WAIT_MS, Math.ceil(due_ms))));
  }

  private wakeIn(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.wake);
    this.wake = setTimeout(() => this.kick(), ms);
  }

  /** Extends every lease this replica holds, in one statement. */
  private async renewLeases(): Promise<void> {
    if (!this.held.size) return;
    await this.dataSource
      .query(
        // Locked in id order, as a batch of successes locks them (SuccessBatch): the two never wait on each other in a cycle.
        `UPDATE subscriptions s SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000)
         FROM (SELECT id FROM subscriptions WHERE id = ANY ($1::text[]) AND lease_token = ANY ($2::text[]) ORDER BY id FOR UPDATE) l
         WHERE s.id = l.id`,
        [[...this.held.keys()], [...new Set(this.held.values())], LEASE_MS],
      )
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not renew webhook delivery leases'));
  }

  /** Sends one claimed subscription its due events in order, until it is caught up, failing, or has had its share. */
  private async turn(subscriptionId: string, token: string, first?: { deliveryId: string; row: AttemptRow | ScreenFirst }): Promise<void> {
    try {
      if (!first) return;
      let attempt: PreparedAttempt | undefined = mustScreen(first.row)
        ? await this.prepare(subscriptionId, token, true)
        : await this.openAttempt(subscriptionId, token, first.deliveryId, first.row);
      if (!attempt) return;
      if (this.stopped) {
        // Prepared by the claim but never made: withdrawn rather than left for the next owner to mark failed.
        await this.dataSource.query(`DELETE FROM deliveries WHERE id = $1`, [attempt.deliveryId]);
        return;
      }
      for (let sent = 1; attempt; sent++) {
        const result = await this.send(attempt);
        this.metrics.record(result);
        if (this.stopped) {
          // Not the endpoint's fault: record it, but leave the retry state alone so the next owner sends it again.
          await this.recordAttempt(this.dataSource.manager, attempt.deliveryId, { ...result, ok: false });
          return;
        }
        const more = sent < this.settings.eventsPerTurn;
        const { goOn, next } = await this.complete(attempt, result, more && !this.stopped);
        if (!goOn || !more) return;
        attempt = next ?? (this.stopped ? undefined : await this.prepare(subscriptionId, token));
      }
    } finally {
      await this.release(subscriptionId, token);
    }
  }

  private async release(subscriptionId: string, token: string): Promise<void> {
    await this.dataSource
      .query(`UPDATE subscriptions SET lease_token = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_token = $2`, [subscriptionId, token])
      .catch(() => undefined);
  }

  /**
   * Picks the next event for a subscription we hold the lease of, and records a pending attempt for it.
   * When its next event has not been tested by its filter, a turn under way ends there: released, the
   * subscription is screened with every other waiting one (EventScreen.screenWaiting), each event read and
   * tested once per distinct filter, instead of reading the events after its bookmark on its own. Only a
   * turn that starts untested (`screenFirst`: a lease that ran out mid-screen) screens here; the filter
   * changing under that screen can ask for it again, a bounded number of times.
   */
  private async prepare(subscriptionId: string, token: string, screenFirst = false): Promise<PreparedAttempt | undefined> {
    for (let tries = 0; tries < 3; tries++) {
      if ((screenFirst || tries > 0) && !(await this.screen.screen(subscriptionId, token))) return undefined;
      const deliveryId = newId(IdPrefix.Delivery);
      const [{ attempt }]: { attempt: AttemptRow | ScreenFirst | null }[] = await this.dataSource.query(
        `SELECT webhook_prepare_attempt($1, $2, $3, $4) AS attempt`,
        [subscriptionId, token, deliveryId, LEASE_MS],
      );
      if (!mustScreen(attempt)) return attempt ? this.openAttempt(subscriptionId, token, deliveryId, attempt) : undefined;
      if (!screenFirst) return undefined;
    }
    return undefined;
  }

  /**
   * The attempt as it will be sent, its secrets opened. A secret this replica cannot decrypt fails loudly
   * (logged with the key id) rather than sending a request no receiver could verify; the pending attempt
   * recorded for it was never made, so it is withdrawn first.
   */
  private async openAttempt(subscriptionId: string, token: string, deliveryId: string, row: AttemptRow): Promise<PreparedAttempt> {
    let secrets: string[];
    try {
      secrets = this.secrets.signingSecrets(subscriptionId, row.secret, row.previous_secret, row.previous_valid);
    } catch (err) {
      await this.dataSource.query(`DELETE FROM deliveries WHERE id = $1`, [deliveryId]);
      throw err;
    }
    return {
      subscriptionId,
      leaseToken: token,
      cursorRevision: row.cursor_revision,
      url: row.url,
      secrets,
      deliveryId,
      eventId: row.event_id,
      eventPosition: Number(row.position),
      body: row.body,
      traceContext: row.trace_context,
    };
  }

  /** One HTTP attempt; when the event was traced, a client span under it whose `traceparent` the receiver gets. */
  private send(attempt: PreparedAttempt): Promise<SendResult> {
    // Signed when its origin has room, so the timestamp is the request's; the timeout runs from there too.
    const post = (extra: Record<string, string> = {}) =>
      this.origins.run(attempt.url, () =>
        postJson(
          attempt.url,
          attempt.body,
          { ...signedHeaders(attempt.secrets, attempt.eventId, attempt.body), ...extra },
          {
            timeoutMs: this.settings.timeoutMs,
            allowPrivate: this.settings.allowPrivate,
            signal: this.abort.signal,
          },
        ),
      );
    if (!attempt.traceContext) return post();
    return inSpan(
      tracer,
      'webhook deliver',
      { kind: SpanKind.CLIENT, parent: contextFrom(attempt.traceContext), attributes: { 'crm.webhook.id': attempt.subscriptionId } },
      async (span) => {
        const traceparent = traceparentOf();
        const result = await post(traceparent ? { traceparent } : {});
        if (result.httpStatus !== null) span.setAttribute('http.response.status_code', result.httpStatus);
        return result;
      },
    );
  }

  private async recordAttempt(m: EntityManager, deliveryId: string, result: SendResult): Promise<void> {
    await m.query(`UPDATE deliveries SET status = $2, http_status = $3, error = $4, duration_ms = $5 WHERE id = $1`, [
      deliveryId,
      result.ok ? 'success' : 'failed',
      result.httpStatus,
      result.error,
      result.durationMs,
    ]);
  }

  /**
   * Records the answer and moves the subscription on. Answers whether to go on with its next event now,
   * and, after a success when `prepareNext` is set, that event's attempt, prepared in the same transaction.
   * Nothing moves when the lease was lost or the cursor was replayed while the request was in flight. A
   * failure schedules the retry, or gives the event up (and may disable the subscription).
   */
  private async complete(attempt: PreparedAttempt, result: SendResult, prepareNext: boolean): Promise<{ goOn: boolean; next?: PreparedAttempt }> {
    if (result.ok) return this.completeSuccess(attempt, result, prepareNext);
    let disabled: WebhookDisabledData | undefined;
    const outcome = await this.dataSource.transaction(async (m): Promise<{ goOn: boolean; next?: PreparedAttempt }> => {
      await relaxedCommit(m);
      await this.recordAttempt(m, attempt.deliveryId, result);
      const [sub]: SubscriptionRow[] = await m.query(LOCKED_SUBSCRIPTION, [attempt.subscriptionId, attempt.leaseToken]);
      if (!sub) return { goOn: false };
      if (sub.cursor_revision !== attempt.cursorRevision) return { goOn: true };
      const failedAttempts = sub.retry_count + 1;
      const next = afterFailure(failedAttempts, this.settings.retryScheduleMs, this.settings.retryJitter);
      if (next.kind === 'retry') {
        await m.query(`UPDATE subscriptions SET retry_count = $2, next_attempt_at = now() + make_interval(secs => $3::float8 / 1000) WHERE id = $1`, [
          sub.id,
          failedAttempts,
          next.delayMs,
        ]);
        return { goOn: false };
      }
      const failureCount = sub.failure_count + 1;
      const disable = sub.status === 'active' && failureCount >= this.settings.disableAfterFailedEvents;
      await m.query(
        `UPDATE subscriptions SET bookmark = $2, retry_position = NULL, retry_count = 0, next_attempt_at = NULL, failure_count = $3,
                status = CASE WHEN $4 THEN 'disabled' ELSE status END,
                updated_at = CASE WHEN $4 THEN now() ELSE updated_at END
         WHERE id = $1`,
        [sub.id, attempt.eventPosition, failureCount, disable],
      );
      if (disable) {
        disabled = {
          webhook_id: sub.id,
          failure_count: failureCount,
          reason: `${failureCount} consecutive events could not be delivered; the last attempt failed with: ${result.error}`,
        };
        await this.outbox.append(m, EventType.WebhookDisabled, disabled);
      }
      return { goOn: !disable };
    });
    if (disabled) {
      this.logger.warn({ webhook_id: disabled.webhook_id, failure_count: disabled.failure_count }, `webhook disabled: ${disabled.reason}`);
    }
    return outcome;
  }

  /**
   * The hot path: the success recorded and the next attempt prepared in one call (see the migration that adds
   * it), written with the successes of other subscriptions' turns that arrive meanwhile (SuccessBatch).
   */
  private async completeSuccess(attempt: PreparedAttempt, result: SendResult, prepareNext: boolean): Promise<{ goOn: boolean; next?: PreparedAttempt }> {
    const nextId = prepareNext ? newId(IdPrefix.Delivery) : null;
    const outcome = (await this.successes.record({
      deliveryId: attempt.deliveryId,
      subscriptionId: attempt.subscriptionId,
      leaseToken: attempt.leaseToken,
      cursorRevision: attempt.cursorRevision,
      eventPosition: attempt.eventPosition,
      httpStatus: result.httpStatus,
      durationMs: result.durationMs,
      nextDeliveryId: nextId,
    })) as { go_on: boolean; next?: AttemptRow | ScreenFirst | null };
    // An untested next event is the shared screen's (see prepare): the turn ends and releases the subscription.
    if (mustScreen(outcome.next)) return { goOn: false };
    if (!outcome.next || !nextId) return { goOn: outcome.go_on };
    try {
      return { goOn: true, next: await this.openAttempt(attempt.subscriptionId, attempt.leaseToken, nextId, outcome.next) };
    } catch {
      // Left to prepare(), which fails the turn loudly; the answer just recorded stands.
      return { goOn: true };
    }
  }
}

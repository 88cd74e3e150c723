import {
  CursorCodec,
  diffFields,
  DomainError,
  ErrorCode,
  eventFilterCost,
  eventFilterIssues,
  eventPathResolver,
  fieldSpecs,
  validationFailed,
  IdPrefix,
  idKey,
  idTime,
  isId,
  newId,
  Page,
  pageSize,
  ServiceConfig,
  toPage,
} from '@crm/common';
import {
  CreateWebhookDto,
  DeliveryView,
  eventTypeReads,
  firstUnread,
  forbiddenRead,
  RequestContext,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  PingResultView,
  ServiceName,
  UpdateWebhookDto,
  WebhookView,
} from '@crm/contracts';
import { currentOrigin } from '@crm/messaging';
import { SERVICE_CONFIG } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { WEBHOOKS_SETTINGS, WebhooksSettings } from '../config/webhooks.settings';
import { Delivery } from '../deliveries/delivery.entity';
import { presentDelivery } from '../deliveries/delivery.presenter';
import { DispatchSignal } from '../deliveries/dispatch-signal';
import { SubscriptionFilters } from '../deliveries/subscription-filters';
import { webhookBody } from '../deliveries/webhook-body';
import { urlProblem } from '../endpoints/address-policy';
import { postJson } from '../endpoints/endpoint-client';
import { generateSigningSecret, MAX_SECRET_BYTES, MIN_SECRET_BYTES, secretKeyBytes, signedHeaders } from '../endpoints/signing';
import { WebhookEvent } from '../event-log/webhook-event.entity';
import { SigningSecrets } from '../secrets/signing-secrets';
import { Subscription } from './subscription.entity';
import { presentSubscription } from './subscription.presenter';

/** Serialises creates and filter changes, so neither the subscription count nor the filters' cost can be raced past. */
const CREATE_LOCK = 'crm:webhooks:create';
/** Fields a PATCH may change, with their column properties. */
const WEBHOOK_FIELDS = fieldSpecs<Subscription>({ name: 'value', url: 'value', event_types: 'value', filter: 'value', status: 'value', metadata: 'json' });
/** A ping must answer before the gateway gives up on the request. */
const PING_HEADROOM_MS = 500;

/** A subscription delivers every event of its types (all, for null): the caller must be able to read them all. */
function assertReceivable(ctx: RequestContext, eventTypes: readonly string[] | null): void {
  const missing = firstUnread(ctx.readable, eventTypeReads(eventTypes));
  if (missing) throw forbiddenRead(missing, eventTypes ? `receiving ${eventTypes.join(', ')}` : 'receiving every event type');
}

@Injectable()
export class WebhooksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly signal: DispatchSignal,
    private readonly filters: SubscriptionFilters,
    private readonly secrets: SigningSecrets,
    private readonly cursors: CursorCodec,
    @Inject(WEBHOOKS_SETTINGS) private readonly settings: WebhooksSettings,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
  ) {}

  async create(ctx: RequestContext, dto: CreateWebhookDto): Promise<{ data: WebhookView; secret: string }> {
    assertReceivable(ctx, dto.event_types ?? null);
    this.checkUrl(dto.url);
    if (dto.secret !== undefined) this.checkSecret(dto.secret);
    checkFilter(dto.filter ?? null, dto.event_types ?? null);
    const secret = dto.secret ?? generateSigningSecret();
    const saved = await this.dataSource.transaction(async (m) => {
      // Serialises creates so the count check below cannot be raced past.
      await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [CREATE_LOCK]);
      const [{ count }] = await m.query(`SELECT count(*)::int AS count FROM subscriptions`);
      if (count >= this.settings.maxSubscriptions) {
        throw DomainError.conflict(`A deployment may have at most ${this.settings.maxSubscriptions} webhook subscriptions; delete one first.`);
      }
      if (dto.filter) await this.assertFiltersCost(m, dto.filter);
      // A new subscription receives events from now on, not the history (use replay for that).
      const [{ head }] = await m.query(`SELECT coalesce(max(position), 0) AS head FROM webhook_events`);
      const id = newId(IdPrefix.Webhook);
      const row = m.create(Subscription, {
        id,
        name: dto.name,
        url: dto.url,
        secret: this.secrets.seal(id, secret),
        eventTypes: dto.event_types ?? null,
        filter: dto.filter ?? null,
        status: 'active',
        failureCount: 0,
        lastDeliveredAt: null,
        metadata: dto.metadata ?? {},
        bookmark: Number(head),
      });
      await m.insert(Subscription, row as QueryDeepPartialEntity<Subscription>);
      return m.findOneByOrFail(Subscription, { id: row.id });
    });
    return { data: presentSubscription(saved), secret };
  }

  async list(query: ListWebhooksQuery): Promise<Page<WebhookView>> {
    const after = this.cursors.decode('webhooks', query.cursor, idKey(IdPrefix.Webhook));
    const size = pageSize(query);
    const qb = this.dataSource
      .getRepository(Subscription)
      .createQueryBuilder('s')
      .orderBy('s.id', 'ASC')
      .limit(size + 1);
    if (query.status) qb.andWhere('s.status = :status', { status: query.status });
    if (after) qb.andWhere('s.id > :after', { after });
    return toPage(this.cursors, 'webhooks', await qb.getMany(), size, (s) => s.id, presentSubscription);
  }

  async get(id: string): Promise<{ data: WebhookView }> {
    return { data: presentSubscription(await this.find(this.dataSource.manager, id)) };
  }

  async update(ctx: RequestContext, id: string, dto: UpdateWebhookDto): Promise<{ data: WebhookView }> {
    if (dto.url !== undefined) this.checkUrl(dto.url);
    if (dto.secret !== undefined) this.checkSecret(dto.secret);
    const saved = await this.dataSource.transaction(async (m) => {
      // Taken before the row lock, in the order creates take them.
      if (dto.filter) await m.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [CREATE_LOCK]);
      const sub = await this.find(m, id, true);
      assertReceivable(ctx, dto.event_types !== undefined ? dto.event_types : sub.eventTypes);
      const { set: patch } = diffFields(sub, dto, WEBHOOK_FIELDS);
      // The filter is checked against the types it will apply to, whichever of the two this PATCH changes.
      if (patch.filter !== undefined || patch.eventTypes !== undefined) {
        checkFilter(
          patch.filter !== undefined ? patch.filter : sub.filter,
          patch.eventTypes !== undefined ? patch.eventTypes : sub.eventTypes,
          patch.filter !== undefined,
        );
        if (patch.filter) await this.assertFiltersCost(m, patch.filter, sub.id);
        // Events already tested were tested with what applied before: the dispatcher tests them again, and an
        // attempt under way when this commits does not move the cursor.
        Object.assign(patch, { screenedPosition: null, cursorRevision: sub.cursorRevision + 1 });
      }
      if (dto.secret !== undefined) {
        // The stored secret is sealed: compare it as the client sees it.
        const current = this.secrets.open(sub.id, sub.secret);
        if (dto.secret !== current) Object.assign(patch, this.replaceSecret(sub.id, current, dto.secret));
      }
      // Re-sending what is stored changes nothing: no write, updated_at stays.
      if (!Object.keys(patch).length) return sub;
      // A new endpoint starts a fresh retry schedule, right away.
      if (patch.url !== undefined) Object.assign(patch, { retryCount: 0, nextAttemptAt: null });
      if (patch.status === 'active') {
        patch.nextAttemptAt = null;
        if (sub.status === 'disabled') Object.assign(patch, { failureCount: 0, retryCount: 0, retryPosition: null });
      }
      await m.update(Subscription, { id: sub.id }, { ...patch, updatedAt: () => 'now()' } as object);
      return m.findOneByOrFail(Subscription, { id: sub.id });
    });
    if (saved.status === 'active') this.signal.announce();
    return { data: presentSubscription(saved) };
  }

  async remove(id: string): Promise<void> {
    if (!isId(id, IdPrefix.Webhook)) throw DomainError.notFound('webhook', id);
    const result = await this.dataSource.createQueryBuilder().delete().from(Subscription).where({ id }).execute();
    if (!result.affected) throw DomainError.notFound('webhook', id);
    this.filters.forget(id);
  }

  async deliveries(id: string, query: ListDeliveriesQuery): Promise<Page<DeliveryView>> {
    const after = this.cursors.decode('deliveries', query.cursor, idKey(IdPrefix.Delivery));
    await this.find(this.dataSource.manager, id);
    const size = pageSize(query);
    const qb = this.dataSource
      .getRepository(Delivery)
      .createQueryBuilder('d')
      .where('d.subscription_id = :id', { id })
      .orderBy('d.id', 'ASC')
      .limit(size + 1);
    if (query.status) qb.andWhere('d.status = :status', { status: query.status });
    if (after) qb.andWhere('d.id > :after', { after });
    return toPage(this.cursors, 'deliveries', await qb.getMany(), size, (d) => d.id, presentDelivery);
  }

  /**
   * Resets the bookmark to just before the named event, so that event and every later one the
   * subscription's event_types and filter match are delivered again, in order, on the next dispatch cycle.
   */
  async replay(id: string, eventId: string): Promise<{ data: WebhookView }> {
    const saved = await this.dataSource.transaction(async (m) => {
      const sub = await this.find(m, id, true);
      const event = isId(eventId, IdPrefix.Event) ? await m.findOneBy(WebhookEvent, { id: eventId }) : null;
      if (!event) throw this.missingEvent(eventId);
      await m.update(Subscription, { id: sub.id }, {
        bookmark: Number(event.position) - 1,
        cursorRevision: sub.cursorRevision + 1,
        retryPosition: null,
        retryCount: 0,
        nextAttemptAt: null,
        updatedAt: () => 'now()',
      } as object);
      return m.findOneByOrFail(Subscription, { id: sub.id });
    });
    this.signal.announce();
    return { data: presentSubscription(saved) };
  }

  /**
   * Why a replay's event is not held: an event made before the copies' retention window (an event id says
   * when it was made) was deleted by it, `410 cursor_expired`; any other is unknown, `404`.
   */
  private missingEvent(eventId: string): DomainError {
    const days = this.settings.eventRetentionDays;
    if (days > 0 && isId(eventId, IdPrefix.Event) && idTime(eventId) < Date.now() - days * 86_400_000) {
      return new DomainError(
        ErrorCode.CursorExpired,
        `Event ${eventId} is older than the ${days} days the webhooks service keeps events for (WEBHOOKS_EVENT_RETENTION_DAYS); it can no longer be sent.`,
        [{ field: 'event_id', code: 'cursor_expired', message: 'the event was deleted by the retention period' }],
      );
    }
    return DomainError.notFound('event', eventId);
  }

  /** Sends a signed `webhook.ping` now, whatever the subscription's status; it is not recorded as a delivery. */
  async ping(id: string): Promise<{ data: PingResultView }> {
    const sub = await this.find(this.dataSource.manager, id);
    const messageId = newId(IdPrefix.Event);
    const body = JSON.stringify(
      webhookBody({
        id: messageId,
        type: 'webhook.ping',
        occurred_at: new Date().toISOString(),
        ...currentOrigin(ServiceName.Webhooks),
        data: { webhook_id: sub.id },
      }),
    );
    const timeoutMs = Math.max(100, Math.min(this.settings.timeoutMs, this.config.rpcTimeoutMs - PING_HEADROOM_MS));
    const result = await postJson(sub.url, body, signedHeaders(this.signingSecrets(sub), messageId, body), {
      timeoutMs,
      allowPrivate: this.settings.allowPrivate,
    });
    if (result.ok && result.httpStatus !== null) return { data: { http_status: result.httpStatus, duration_ms: result.durationMs } };
    const message =
      result.httpStatus !== null
        ? `The endpoint answered HTTP ${result.httpStatus} after ${result.durationMs} ms.`
        : `The endpoint could not be reached: ${result.error} (after ${result.durationMs} ms).`;
    throw new DomainError(ErrorCode.BadGateway, message);
  }

  /**
   * A new secret signs from now on; the one it replaces keeps signing too (a second `v1,` signature)
   * until the overlap ends, so receivers can switch to the new one without dropping a delivery.
   */
  private replaceSecret(id: string, current: string, next: string): Record<string, unknown> {
    const overlap = this.settings.secretOverlapSeconds;
    return {
      secret: this.secrets.seal(id, next),
      previousSecret: overlap > 0 ? this.secrets.seal(id, current) : null,
      previousSecretExpiresAt: overlap > 0 ? () => `now() + make_interval(secs => ${overlap})` : null,
    };
  }

  private signingSecrets(sub: Subscription): string[] {
    const previousValid = sub.previousSecretExpiresAt !== null && sub.previousSecretExpiresAt.getTime() > Date.now();
    return this.secrets.signingSecrets(sub.id, sub.secret, sub.previousSecret, previousValid);
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<Subscription> {
    if (!isId(id, IdPrefix.Webhook)) throw DomainError.notFound('webhook', id);
    const sub = await m.findOne(Subscription, { where: { id }, ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}) });
    if (!sub) throw DomainError.notFound('webhook', id);
    return sub;
  }

  /**
   * Refuses a filter that would take the deployment's distinct stored filters past WEBHOOKS_FILTERS_MAX_COST
   * conditions in all: screening tests every new event with each of them (subscriptions sharing a filter share
   * its answer, so it counts once). A change that adds nothing passes, even where a limit lowered since is
   * already exceeded, so such a deployment can still be brought under it. The caller holds CREATE_LOCK.
   */
  private async assertFiltersCost(m: EntityManager, filter: Record<string, unknown>, replacing?: string): Promise<void> {
    const stored: Array<{ filter: string; others: boolean; same: boolean }> = await m.query(
      `SELECT filter::text AS filter, bool_or(id <> $1) AS others, bool_or(filter = $2::jsonb) AS same
       FROM subscriptions WHERE filter IS NOT NULL GROUP BY filter`,
      [replacing ?? '', JSON.stringify(filter)],
    );
    const cost = (text: string) => eventFilterCost(JSON.parse(text));
    const before = stored.reduce((sum, f) => sum + cost(f.filter), 0);
    const kept = stored.filter((f) => f.others);
    const added = kept.some((f) => f.same) ? 0 : eventFilterCost(filter);
    const after = kept.reduce((sum, f) => sum + cost(f.filter), 0) + added;
    const max = this.settings.filtersMaxCost;
    if (after <= max || after <= before) return;
    const message =
      `The webhook filters of a deployment may have at most ${max} conditions in all (WEBHOOKS_FILTERS_MAX_COST; a filter shared by ` +
      `several subscriptions counts once). This filter has ${eventFilterCost(filter)}, which would make ${after}; simplify or remove another filter first.`;
    throw DomainError.conflict(message, [{ field: 'filter', code: 'too_costly', message }]);
  }

  private checkUrl(url: string): void {
    const problem = urlProblem(url, this.settings);
    if (problem) throw DomainError.invalid('url', problem);
  }

  private checkSecret(secret: string): void {
    const bytes = secretKeyBytes(secret);
    if (bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
      throw DomainError.invalid('secret', `secret must carry ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes of key, got ${bytes}`);
    }
  }
}

/**
 * A filter must name only paths the subscription's event types carry, with operators and values that fit
 * them: otherwise one 400 naming each. Its size limits apply to a filter given now, not to one stored before
 * they did and kept unchanged, so such a subscription's event types can still be changed.
 */
function checkFilter(filter: Record<string, unknown> | null, eventTypes: string[] | null, given = true): void {
  if (filter === null) return;
  const issues = eventFilterIssues(filter, eventPathResolver(eventTypes), 'filter', { sized: given });
  if (issues.length) throw validationFailed(issues);
}

import { newId } from '@crm/common';
import {
  CreateErasureDto,
  DomainError,
  ErasureStepReply,
  ErasureTarget,
  ErasureView,
  event,
  ErrorCode,
  EventType,
  IdPrefix,
  Ops,
  RequestContext,
  ChangeOrigin,
  gatewayErasureSubject,
} from '@crm/contracts';
import { currentOrigin, MESSAGING_OPTIONS, MessagingOptions, NATS_CONNECTION, OutboxService, RpcCaller, withOrigin, withoutDeadline } from '@crm/messaging';
import { JSONCodec, NatsConnection } from 'nats';
import { runErasureStores } from '@crm/runtime';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { contactsErasureDeclaration } from './contacts-erasure.stores';
import { Suppressions } from './suppressions';

/** The steps of an erasure, in order; each is idempotent, and its result is kept as it completes. */
export const ERASURE_STEPS = ['deals', 'contacts', 'gateway', 'webhooks', 'events', 'announce'] as const;
type Step = (typeof ERASURE_STEPS)[number];
const codec = JSONCodec<unknown>();
const REMOTE = { deals: Ops.privacyInternal.deals, webhooks: Ops.privacyInternal.webhooks, events: Ops.privacyInternal.events } as const;

/** A replica holds an erasure this long without renewing; a killed one's erasure resumes after it. */
const LEASE_SECONDS = 15;
/** How long a step whose service does not answer in time is asked again before the erasure fails. */
const STEP_PATIENCE_MS = 10 * 60_000;

interface ErasureRow {
  id: string;
  contact_id: string | null;
  email_hmac: string | null;
  reason: string | null;
  suppress: boolean;
  status: ErasureView['status'];
  step: string | null;
  target: ErasureTarget | null;
  results: Partial<Record<Step, ErasureStepReply>>;
  receipt: ErasureView['receipt'];
  error: string | null;
  origin: ChangeOrigin;
  created_at: Date;
  updated_at: Date;
}

function present(row: ErasureRow): ErasureView {
  return {
    id: row.id,
    status: row.status,
    subject_id: row.contact_id,
    email_hmac: row.email_hmac,
    reason: row.reason,
    suppress: row.suppress,
    step: row.step,
    error: row.error,
    receipt: row.receipt,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/**
 * Erasure of a person (docs/privacy.md). The contacts service keeps the person, so it keeps the erasure:
 * a row per subject whose steps run one after the other, each asking a store owner to erase what it
 * holds, the result of each kept as it completes, so a restarted replica resumes where the last one was.
 */
@Injectable()
export class ErasuresService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Erasures');
  private readonly running = new Set<string>();
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly rpc: RpcCaller,
    private readonly suppressions: Suppressions,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly messaging: MessagingOptions,
  ) {}

  onApplicationBootstrap(): void {
    void this.resumeAll();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
  }

  async create(ctx: RequestContext, dto: CreateErasureDto): Promise<ErasureView> {
    const { object, id, email } = dto.subject;
    if (Boolean(email) === Boolean(id || object) || (!email && !(object && id))) {
      throw DomainError.invalid('subject', 'subject is either {"object": "contacts", "id": …} or {"email": …}');
    }
    const emailHmac = email ? await this.emailHmac(email) : null;
    const row = await this.dataSource.transaction(async (m) => {
      const [contact]: Array<Record<string, string | null>> = await m.query(
        id
          ? `SELECT id, email, phone, first_name, last_name FROM contacts WHERE id = $1`
          : `SELECT id, email, phone, first_name, last_name FROM contacts WHERE lower(email) = lower($1)`,
        [id ?? email],
      );
      const subjectKey = contact ? contact.id! : id ? id : `email:${emailHmac}`;
      const [existing]: ErasureRow[] = await m.query(`SELECT * FROM erasures WHERE subject_key = $1`, [subjectKey]);
      if (existing) return dto.suppress ? this.suppressing(m, existing) : existing;
      if (!contact && id) throw DomainError.notFound('contact', id);
      const needles = contact ? personalValues(contact) : [email!];
      const origin = currentOrigin('privacy');
      const [inserted]: ErasureRow[] = await m.query(
        `INSERT INTO erasures (id, subject_key, contact_id, email_hmac, reason, suppress, status, target, origin)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8)
         ON CONFLICT (subject_key) DO NOTHING RETURNING *`,
        [
          newId(IdPrefix.Erasure),
          subjectKey,
          contact?.id ?? null,
          contact?.email ? await this.emailHmac(contact.email) : emailHmac,
          dto.reason ?? null,
          dto.suppress ?? false,
          JSON.stringify({ contact_id: contact?.id ?? null, needles }),
          JSON.stringify(origin),
        ],
      );
      const row = inserted ?? ((await m.query(`SELECT * FROM erasures WHERE subject_key = $1`, [subjectKey])) as ErasureRow[])[0];
      return dto.suppress ? this.suppressing(m, row) : row;
    });
    if (row.status === 'pending' || row.status === 'running') void this.run(row.id);
    return present(row);
  }

  /**
   * Suppresses the erasure's email from the request on (docs/privacy.md, "Suppression"), in the
   * transaction that makes or finds the erasure, so no write of the email slips in while it runs. Asked
   * again with `suppress`, an erasure made without it suppresses too.
   */
  private async suppressing(m: EntityManager, row: ErasureRow): Promise<ErasureRow> {
    if (!row.email_hmac) return row;
    await this.suppressions.suppress(m, row.email_hmac, row.id);
    if (row.suppress) return row;
    const [updated]: ErasureRow[] = await m.query(
      `WITH updated AS (UPDATE erasures SET suppress = true, updated_at = now() WHERE id = $1 RETURNING *) SELECT * FROM updated`,
      [row.id],
    );
    return updated;
  }

  async get(id: string): Promise<ErasureView> {
    const [row]: ErasureRow[] = await this.dataSource.query(`SELECT * FROM erasures WHERE id = $1`, [id]);
    if (!row) throw DomainError.notFound('erasure', id);
    return present(row);
  }

  /** The keyed hash of an email (Suppressions keeps the key). */
  emailHmac(email: string): Promise<string> {
    return this.suppressions.emailHmac(email);
  }

  private async resumeAll(): Promise<void> {
    try {
      const rows: Array<{ id: string; wait: number }> = await this.dataSource.query(
        `SELECT id, greatest(0, extract(epoch FROM lease_until - now()))::float AS wait FROM erasures WHERE status IN ('pending', 'running') ORDER BY created_at`,
      );
      for (const { id, wait } of rows) setTimeout(() => void this.run(id), Math.ceil(wait * 1000) + 100).unref();
    } catch (error) {
      this.logger.error(`resuming erasures failed: ${(error as Error).message}`);
    }
  }

  /** Takes the erasure's lease, or answers false when another replica holds it. */
  private async claim(id: string): Promise<ErasureRow | undefined> {
    const [row]: ErasureRow[] = await this.dataSource.query(
      `WITH claimed AS (UPDATE erasures SET lease_until = now() + make_interval(secs => $2), status = 'running', updated_at = now()
         WHERE id = $1 AND status IN ('pending', 'running') AND (lease_until IS NULL OR lease_until < now()) RETURNING *)
       SELECT * FROM claimed`,
      [id, LEASE_SECONDS],
    );
    return row;
  }

  /**
   * Runs the erasure to its end, outside the wait of the request that asked for it: under that request's
   * deadline every query and call after its first seconds would be refused, and the erasure would retry a
   * step for ever (docs/privacy.md).
   */
  run(id: string): Promise<void> {
    return withoutDeadline(() => this.runClaimed(id));
  }

  private async runClaimed(id: string): Promise<void> {
    if (this.running.has(id) || this.stopped) return;
    this.running.add(id);
    try {
      const row = await this.claim(id);
      if (!row) {
        const [left]: Array<{ wait: number }> = await this.dataSource.query(
          `SELECT greatest(0, extract(epoch FROM lease_until - now()))::float AS wait FROM erasures WHERE id = $1 AND status IN ('pending', 'running')`,
          [id],
        );
        if (left) setTimeout(() => void this.run(id), Math.ceil(left.wait * 1000) + 100).unref();
        return;
      }
      await withOrigin(row.origin, () => this.steps(row));
    } catch (error) {
      const message = (error as Error).message;
      this.logger.error(`erasure ${id} failed: ${message}`);
      await this.dataSource
        .query(`UPDATE erasures SET status = 'failed', error = $2, lease_until = NULL, updated_at = now() WHERE id = $1`, [id, message.slice(0, 500)])
        .catch(() => undefined);
    } finally {
      this.running.delete(id);
    }
  }

  private async steps(row: ErasureRow): Promise<void> {
    const results = { ...row.results };
    const target: ErasureTarget = { ...row.target!, erasure_id: row.id };
    for (const step of ERASURE_STEPS) {
      if (results[step] || this.stopped) continue;
      await this.dataSource.query(`UPDATE erasures SET step = $2, lease_until = now() + make_interval(secs => $3), updated_at = now() WHERE id = $1`, [
        row.id,
        step,
        LEASE_SECONDS,
      ]);
      if (step === 'announce') return this.complete(row, results);
      results[step] = await this.runStep(step, target);
      await this.dataSource.query(`UPDATE erasures SET results = results || $2::jsonb, updated_at = now() WHERE id = $1`, [
        row.id,
        JSON.stringify({ [step]: results[step] }),
      ]);
    }
  }

  private async runStep(step: Exclude<Step, 'announce'>, target: ErasureTarget): Promise<ErasureStepReply> {
    if (step === 'contacts') {
      const { stores } = await runErasureStores(this.dataSource, contactsErasureDeclaration(this.outbox), target);
      return { stores };
    }
    if (step === 'gateway') return this.askGateway(target);
    const ctx: RequestContext = { request_id: currentOrigin('privacy').request_id ?? `erasure-${target.erasure_id}` };
    // A large step outlasts one call's wait (RPC_TIMEOUT_MS) and goes on in its service: ask again, under a
    // renewed lease, until it answers. The stores it finished are in its ledger, so asking again redoes nothing.
    const giveUpAt = Date.now() + STEP_PATIENCE_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.rpc.call(REMOTE[step], ctx, { body: target });
      } catch (error) {
        const transient = error instanceof DomainError && error.code === ErrorCode.ServiceUnavailable;
        if (!transient || this.stopped || Date.now() > giveUpAt) throw error;
        this.logger.warn(`erasure ${target.erasure_id}: the ${step} step did not answer in time (attempt ${attempt}); asking again`);
        await this.dataSource.query(`UPDATE erasures SET lease_until = now() + make_interval(secs => $2), updated_at = now() WHERE id = $1`, [
          target.erasure_id,
          LEASE_SECONDS,
        ]);
        await new Promise((resolve) => setTimeout(resolve, Math.min(attempt * 500, 5_000)));
      }
    }
  }

  /** The gateway's stored Idempotency-Key answers: one gateway replica redacts them (IdempotencyErasure). */
  private async askGateway(target: ErasureTarget): Promise<ErasureStepReply> {
    const msg = await this.nc.request(gatewayErasureSubject(this.messaging.namespace), codec.encode(target), { timeout: 60_000 });
    const reply = codec.decode(msg.data) as ErasureStepReply | { error: string };
    if ('error' in reply) throw new Error(`the gateway could not erase its stored answers: ${reply.error}`);
    return reply;
  }

  /** The receipt, `privacy.erased` and the end of the values kept for the run, in one transaction. */
  private async complete(row: ErasureRow, results: Partial<Record<Step, ErasureStepReply>>): Promise<void> {
    const replies = Object.values(results) as ErasureStepReply[];
    const completedAt = new Date().toISOString();
    const receipt = {
      subject_id: row.contact_id,
      email_hmac: row.email_hmac,
      stores: replies.flatMap((r) => r.stores),
      event_log_ranges: replies.flatMap((r) => r.event_log_ranges ?? []),
      stream_ranges: replies.flatMap((r) => r.stream_ranges ?? []),
      completed_at: completedAt,
    };
    await this.dataSource.transaction(async (m) => {
      const [still]: unknown[] = await m.query(`SELECT 1 FROM erasures WHERE id = $1 AND status = 'running' FOR UPDATE`, [row.id]);
      if (!still) return;
      await this.outbox.record(m, { events: [event(EventType.PrivacyErased, { contact_id: row.contact_id, erasure_id: row.id })], changes: [] });
      await m.query(`UPDATE erasures SET status = 'completed', step = NULL, target = NULL, receipt = $2, lease_until = NULL, updated_at = $3 WHERE id = $1`, [
        row.id,
        JSON.stringify(receipt),
        completedAt,
      ]);
    });
  }
}

/** The values the person is found by in other records' text: email, phone, full name, surname. */
export function personalValues(contact: Record<string, string | null>): string[] {
  const full = [contact.first_name, contact.last_name].filter(Boolean).join(' ');
  return [contact.email, contact.phone, full.includes(' ') ? full : null, contact.last_name].filter((v): v is string => Boolean(v && v.length >= 2));
}

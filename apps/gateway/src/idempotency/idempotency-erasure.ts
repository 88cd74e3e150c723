import { Logger } from '@crm/common';
import { ErasureStepReply, ErasureTarget, ErrorCode, gatewayErasureSubject, gatewayQueueGroup } from '@crm/contracts';
import { NATS_CONNECTION } from '@crm/messaging';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { JSONCodec, Msg, NatsConnection, Subscription } from 'nats';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { LOGGER } from '../tokens';

const codec = JSONCodec<unknown>();

/**
 * What a retry of a request whose stored answer named an erased person gets instead of it. It names the
 * erasure, so the erasure counts the answers it replaced again when asked again (its receipt stays right).
 */
export function erasedAnswer(erasureId: string): string {
  return JSON.stringify({
    error: {
      code: ErrorCode.Conflict,
      message: `The request with this Idempotency-Key was applied, but its stored answer named a person since erased (${erasureId}, docs/privacy.md) and is not kept; it is not applied again. Fetch the resource instead.`,
    },
  });
}

/**
 * The gateway's part of an erasure (docs/privacy.md, "Stored answers"): the contacts service asks on
 * `<namespace>.gateway.privacy.erase`, one replica answers (a queue group). Every stored Idempotency-Key
 * answer that names the person (the contact id or one of the values the person is found by) is replaced
 * by a `409 conflict` saying it was erased: the key stays used, so a retry is still never applied twice.
 * Idempotent: an answer already replaced names no one but the erasure, and is counted again.
 */
@Injectable()
export class IdempotencyErasure implements OnModuleInit, OnModuleDestroy {
  private subscription?: Subscription;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(GATEWAY_CONFIG) private readonly config: Pick<GatewayConfig, 'namespace'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.subscription = this.nc.subscribe(gatewayErasureSubject(this.config.namespace), {
      queue: gatewayQueueGroup(this.config.namespace),
      callback: (err, msg) => {
        if (!err) void this.answer(msg);
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  private async answer(msg: Msg): Promise<void> {
    try {
      const target = codec.decode(msg.data) as ErasureTarget;
      if (!Array.isArray(target?.needles) || typeof target.erasure_id !== 'string') throw new Error('an erasure request names no erasure or no values');
      msg.respond(codec.encode(await this.erase(target)));
    } catch (err) {
      // The message only: the request's values are the person's.
      this.logger.error({ err: (err as Error).message }, 'could not erase stored idempotent answers');
      msg.respond(codec.encode({ error: (err as Error).message }));
    }
  }

  /** Replaces every stored answer naming the person; answers how many. */
  async erase(target: ErasureTarget): Promise<ErasureStepReply> {
    const values = [...target.needles, ...(target.contact_id ? [target.contact_id] : [])].filter((v) => v.length >= 2).map((v) => v.toLowerCase());
    // Those replaced now, and those a first run of the same erasure replaced (its answer names it).
    const [{ redacted }]: Array<{ redacted: number }> = values.length
      ? await this.dataSource.query(
          `WITH replaced AS (
             UPDATE idempotency_keys SET response_status = 409, response_type = 'application/json; charset=utf-8', response_body = $2
              WHERE response_body IS NOT NULL AND response_body <> $2
                AND EXISTS (SELECT 1 FROM unnest($1::text[]) v WHERE strpos(lower(response_body), v) > 0)
             RETURNING 1)
           SELECT ((SELECT count(*) FROM replaced) + (SELECT count(*) FROM idempotency_keys WHERE response_body = $2))::int AS redacted`,
          [values, erasedAnswer(target.erasure_id)],
        )
      : [{ redacted: 0 }];
    return { stores: [{ store: 'gateway.idempotency_keys', deleted: 0, redacted }] };
  }
}

import { DomainError, ErrorCode, Logger } from '@crm/common';
import { secretNotReplayed } from '@crm/contracts';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { createHash } from 'crypto';
import type { FastifyReply } from 'fastify';
import type { ServerResponse } from 'http';
import { PeriodicTask } from '@crm/runtime';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { callerOf, GatewayRequest } from '../http/request-context';
import { jsonBodyOf } from '../http/request-body';
import { RouteIndex, RouteTarget } from '../http/route-index';
import { scopeForbidden, ScopesGuard } from '../http/scopes';
import { writeError } from '../http/write-error';
import { LOGGER } from '../tokens';
import { SECRET_REPLY_METADATA } from './secret-reply';

const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE']);
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
const PURGE_EVERY_MS = 60 * 60 * 1000;
const IN_PROGRESS = { code: ErrorCode.Conflict, message: 'A request with this Idempotency-Key is in progress; retry shortly.' };

interface StoredRequest {
  request_hash: string;
  response_status: number | null;
  response_type: string | null;
  response_body: string | null;
}

/**
 * Stripe-style `Idempotency-Key` on POST, PATCH and DELETE. The first request with a key claims it (one
 * row per API key and Idempotency-Key in the gateway's database, so every replica sees it) and its
 * response is stored; a retry with the same request gets that response again with
 * `Idempotent-Replayed: true`, a different request with the same key is 422, and a retry while the first
 * is still running is 409. Stored results are kept IDEMPOTENCY_TTL_HOURS (24 by default).
 *
 * A gateway can die after the service committed and before the response was stored. The service side
 * covers that: the request carries `idempotency_ref`, the service records the change and its reply under
 * it (RequestOutcomes), and once the dead gateway's claim has lapsed a retry is forwarded again
 * and gets the recorded reply instead of applying the change twice.
 *
 * The route's permission is checked (by the same ScopesGuard Nest runs later) before the key is claimed
 * or anything stored is answered: a token's subject shares one store across tokens of different
 * permissions, and one lacking the route's permission must get 403, not another token's answer. A route
 * whose answer carries a secret (@RepliesWithSecret) has a 409 stored in place of its success, never the
 * secret itself.
 */
@Injectable()
export class IdempotencyHook implements OnModuleInit, OnModuleDestroy {
  private readonly purges: PeriodicTask;
  private guard?: ScopesGuard;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly routes: RouteIndex,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
  ) {
    this.purges = new PeriodicTask(
      PURGE_EVERY_MS,
      () => this.purge(),
      (err) => this.logger.warn({ err: err.message }, 'could not purge expired idempotency keys'),
      {
        firstRun: 'after-interval',
      },
    );
  }

  async onModuleInit(): Promise<void> {
    // The guard Nest runs on every route, with whatever it is built from.
    this.guard = await this.moduleRef.create(ScopesGuard);
    this.purges.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.purges.stop();
  }

  /** A `preHandler` hook, after the key check, the body's parsing and the batch cost. */
  async preHandler(req: GatewayRequest, reply: FastifyReply): Promise<unknown> {
    const key = req.headers['idempotency-key'];
    if (key === undefined || !WRITE_METHODS.has(req.method) || !req.principal) return;
    if (typeof key !== 'string' || !KEY_SHAPE.test(key)) {
      return writeError(reply, {
        code: ErrorCode.ValidationFailed,
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
        details: [{ field: 'Idempotency-Key', code: 'invalid_value', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' }],
      });
    }
    const target = this.routes.targetOf(req.method, req.routeOptions.url);
    const refused = target && (await this.refusal(req, reply, target));
    if (refused) return writeError(reply, refused.toBody());
    const secret = target !== undefined && this.reflector.get<boolean | undefined>(SECRET_REPLY_METADATA, target.handler) === true;
    // A token's requests are its subject's: the column names a key for the requests made with one.
    const apiKeyId = req.principal.keyId ?? callerOf(req.principal);
    // An upload's key covers its method and URL: its body is a stream the route has yet to read.
    // A subject's tokens share one store but may each hold other permissions: a retry is the same request
    // only with the same permissions, so no route that checks inside (a tool of /mcp) answers a narrower
    // token with a wider one's stored answer. A key's permissions never change, so its hash leaves them out.
    const permissions = req.principal.keyId === undefined ? `\n${[...req.principal.permissions].sort().join(' ')}` : '';
    const hash = createHash('sha256')
      .update(`${req.method} ${req.url}${permissions}\n${JSON.stringify(jsonBodyOf(req) ?? null)}`)
      .digest('hex');
    try {
      const claimedAt = await this.claim(apiKeyId, key, hash);
      if (claimedAt) {
        // The claim's time is part of the reference: a key reused after the retention period is a new request.
        req.idempotencyRef = createHash('sha256').update(`${apiKeyId}\n${key}\n${claimedAt}`).digest('hex');
        this.recordResponse(apiKeyId, key, reply, secret);
        return;
      }
      const stored = await this.find(apiKeyId, key);
      if (!stored) return writeError(reply, IN_PROGRESS);
      if (stored.request_hash !== hash) {
        return writeError(reply, {
          code: ErrorCode.IdempotencyKeyReused,
          message: 'This Idempotency-Key was used with a different request (method, path or body); use a new key for a new request.',
        });
      }
      if (stored.response_status !== null) return this.replay(reply, stored);
      // Still running, or its gateway died a moment ago and the claim has not lapsed yet.
      return writeError(reply, IN_PROGRESS);
    } catch (err) {
      this.logger.error({ err, request_id: req.id }, 'idempotency store failed');
      return writeError(reply, { code: ErrorCode.ServiceUnavailable, message: 'Idempotency keys cannot be checked right now; try again shortly.' });
    }
  }

  /** Why the route's guard refuses the request, or undefined when it lets it through. */
  private async refusal(req: GatewayRequest, reply: FastifyReply, target: RouteTarget): Promise<DomainError | undefined> {
    const context = new ExecutionContextHost([req, reply], target.controller, target.handler);
    context.setType('http');
    try {
      return (await this.guard!.canActivate(context)) ? undefined : scopeForbidden(req);
    } catch (err) {
      if (err instanceof DomainError) return err;
      throw err;
    }
  }

  /**
   * Claims the key; takes over a record older than the retention period, or the same request's claim
   * that lapsed without a stored response (its gateway died). Answers when the claim was first made if
   * this request owns it.
   */
  private async claim(apiKeyId: string, key: string, hash: string): Promise<string | undefined> {
    const lockMs = 2 * this.config.rpcTimeoutMs + 5000;
    const rows: Array<{ claimed_at: string }> = await this.dataSource.query(
      `INSERT INTO idempotency_keys (api_key_id, idempotency_key, request_hash, locked_until)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4))
       ON CONFLICT (api_key_id, idempotency_key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, locked_until = EXCLUDED.locked_until,
             response_status = NULL, response_type = NULL, response_body = NULL,
             created_at = CASE WHEN idempotency_keys.created_at < now() - make_interval(hours => $5) THEN now() ELSE idempotency_keys.created_at END
         WHERE idempotency_keys.created_at < now() - make_interval(hours => $5)
            OR (idempotency_keys.response_status IS NULL AND idempotency_keys.locked_until <= now()
                AND idempotency_keys.request_hash = EXCLUDED.request_hash)
       RETURNING extract(epoch FROM created_at)::text AS claimed_at`,
      [apiKeyId, key, hash, lockMs / 1000, this.config.idempotencyTtlHours],
    );
    return rows[0]?.claimed_at;
  }

  private async find(apiKeyId: string, key: string): Promise<StoredRequest | undefined> {
    const rows: StoredRequest[] = await this.dataSource.query(
      `SELECT request_hash, response_status, response_type, response_body
         FROM idempotency_keys
        WHERE api_key_id = $1 AND idempotency_key = $2 AND created_at >= now() - make_interval(hours => $3)`,
      [apiKeyId, key, this.config.idempotencyTtlHours],
    );
    return rows[0];
  }

  private replay(reply: FastifyReply, stored: StoredRequest): FastifyReply {
    reply.header('Idempotent-Replayed', 'true');
    if (stored.response_type) reply.type(stored.response_type);
    return reply.code(stored.response_status!).send(stored.response_body || undefined);
  }

  /**
   * Keeps what is written to the connection, whoever writes it (Fastify's reply, or the MCP transport,
   * which takes the raw response), and stores it once the response is complete. A 503 is not stored: the
   * service was away or did not answer in time (and may still apply the change), so the claim lapses at
   * once and the same request may be sent again; the service applies it at most once. A success that
   * carries a secret (`secret`) is stored as the 409 a retry gets instead.
   */
  private recordResponse(apiKeyId: string, key: string, reply: FastifyReply, secret: boolean): void {
    const res = reply.raw;
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown) => {
      if (typeof chunk === 'string' || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return write(chunk, ...rest);
    }) as ServerResponse['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      keep(chunk);
      return end(chunk, ...rest);
    }) as ServerResponse['end'];
    res.once('finish', () => {
      const withheld = secret && res.statusCode >= 200 && res.statusCode < 300;
      const [status, type, body] = withheld
        ? [409, 'application/json; charset=utf-8', JSON.stringify({ error: secretNotReplayed().toBody() })]
        : [res.statusCode, reply.getHeader('Content-Type') ?? res.getHeader('Content-Type') ?? null, Buffer.concat(chunks).toString('utf8')];
      const stored =
        res.statusCode === 503
          ? this.dataSource.query(`UPDATE idempotency_keys SET locked_until = now() WHERE api_key_id = $1 AND idempotency_key = $2`, [apiKeyId, key])
          : this.dataSource.query(
              `UPDATE idempotency_keys SET response_status = $3, response_type = $4, response_body = $5, locked_until = NULL
                WHERE api_key_id = $1 AND idempotency_key = $2`,
              [apiKeyId, key, status, type, body],
            );
      stored.catch((err: Error) => this.logger.error({ err }, 'could not store an idempotent response'));
    });
  }

  private async purge(): Promise<void> {
    await this.dataSource.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => $1)`, [this.config.idempotencyTtlHours]);
  }
}

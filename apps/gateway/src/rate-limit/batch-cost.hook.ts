import { ErrorCode, Logger } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { isBatchWrite } from '../http/request-body';
import { callerOf, GatewayRequest } from '../http/request-context';
import { writeError } from '../http/write-error';
import { batchToolItems } from '../mcp/batch-tools';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { LOGGER } from '../tokens';
import { RateLimiterService, setRateLimitHeaders } from './rate-limiter.service';

/**
 * A batch write costs one token per item (docs/batch.md): the key check took the first, this takes the
 * rest once the body is parsed, so a batch of 200 spends what 200 single writes would. The cost is capped
 * at the bucket's capacity, or a batch larger than the burst could never pass. A refused batch gets its
 * first token back: like any refused request, it costs nothing. An MCP call of a batch tool is the same
 * batch write, and costs the same.
 */
@Injectable()
export class BatchCostHook {
  constructor(
    private readonly limiter: RateLimiterService,
    private readonly metrics: GatewayMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** A `preHandler` hook: the body is parsed by now. */
  async preHandler(req: GatewayRequest, reply: FastifyReply): Promise<unknown> {
    const items = isBatchWrite(req) ? (req.body as { items?: unknown } | undefined)?.items : batchToolItems(req);
    if (!req.principal || !Array.isArray(items) || items.length < 2) return;
    const bucket = callerOf(req.principal);
    const extra = Math.min(items.length, this.limiter.capacity) - 1;
    try {
      const decision = await this.limiter.take(bucket, extra);
      setRateLimitHeaders(reply, decision);
      if (decision.allowed) return;
      await this.limiter.refund(bucket);
      this.metrics.rateLimited.inc();
      const s = decision.retryAfterSeconds;
      return writeError(
        reply,
        {
          code: ErrorCode.RateLimitExceeded,
          message: `Rate limit exceeded: a batch of ${items.length} items costs ${extra + 1} requests; retry in ${s} second${s === 1 ? '' : 's'}.`,
        },
        { 'Retry-After': String(s) },
      );
    } catch (err) {
      this.logger.error({ err, request_id: req.id }, 'batch rate limit failed unexpectedly');
      return writeError(reply, { code: ErrorCode.Internal, message: 'An internal error occurred.' });
    }
  }
}

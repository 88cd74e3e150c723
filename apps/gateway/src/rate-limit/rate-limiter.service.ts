import { Logger } from '@crm/common';
import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import Redis, { ClientContext, Result } from 'ioredis';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { LOGGER } from '../tokens';
import { TOKEN_BUCKET_LUA } from './token-bucket.lua';

export const REDIS = Symbol('REDIS');

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the bucket is full again. */
  resetAt: number;
  /** Whole seconds to wait before the next request can succeed (0 when allowed). */
  retryAfterSeconds: number;
}

/** The X-RateLimit-* headers of a decision: the bucket after this request. */
export function setRateLimitHeaders(reply: FastifyReply, decision: RateDecision): void {
  reply.header('X-RateLimit-Limit', String(decision.limit));
  reply.header('X-RateLimit-Remaining', String(decision.remaining));
  reply.header('X-RateLimit-Reset', String(decision.resetAt));
}

type BucketReply = [number, number, number, number, number];

// The script defineCommand registers below, typed as ioredis declares its own commands.
declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext = { type: 'default' }> {
    crmTokenBucket(key: string, burst: number, refillPerMs: number, cost: number): Result<BucketReply, Context>;
  }
}

/**
 * Per-key token bucket in Redis, shared by all gateway replicas. When Redis cannot be reached the
 * limiter fails open: requests pass, a warning is logged (at most every 10 s) and a counter rises.
 * Refusing all traffic because a cache is down would turn a Redis hiccup into a full outage.
 */
@Injectable()
export class RateLimiterService implements OnApplicationShutdown {
  private readonly refillPerMs: number;
  private lastWarning = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: GatewayMetrics,
  ) {
    this.refillPerMs = config.rateLimitPerMinute / 60_000;
    this.redis.defineCommand('crmTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
  }

  /** Spends `cost` tokens (one per request, one per item of a batch) from `subject`'s bucket, or none when it has fewer. */
  take(subject: string, cost = 1): Promise<RateDecision> {
    return this.step(subject, cost);
  }

  /** Gives back tokens taken from `subject`'s bucket for a request that turned out to belong to another bucket, or was refused. */
  async refund(subject: string, tokens = 1): Promise<void> {
    await this.step(subject, -tokens);
  }

  /** The most tokens one request can ever spend: a full bucket. */
  get capacity(): number {
    return this.config.rateLimitBurst;
  }

  private async step(subject: string, cost: number): Promise<RateDecision> {
    const limit = this.config.rateLimitPerMinute;
    try {
      const key = `${this.config.namespace}:ratelimit:${subject}`;
      const reply = await this.redis.crmTokenBucket(key, this.config.rateLimitBurst, this.refillPerMs, cost);
      const [allowed, remaining, retryAfterMs, untilFullMs, nowMs] = reply.map(Number);
      return {
        allowed: allowed === 1,
        limit,
        remaining,
        resetAt: Math.ceil((nowMs + untilFullMs) / 1000),
        retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)),
      };
    } catch (err) {
      this.metrics.rateLimiterFailOpen.inc();
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn({ err: (err as Error).message }, 'rate limiter cannot reach Redis; letting requests through');
      }
      return { allowed: true, limit, remaining: limit, resetAt: Math.ceil(Date.now() / 1000), retryAfterSeconds: 0 };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}

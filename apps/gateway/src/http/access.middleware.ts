import { ErrorCode, Logger } from '@crm/common';
import { ApiScope } from '@crm/contracts';
import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Response } from 'express';
import { ApiKeysService } from '../apikeys/api-keys.service';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { RateLimiterService } from '../rate-limit/rate-limiter.service';
import { LOGGER } from '../tokens';
import { GatewayRequest } from './request-context';
import { writeError } from './write-error';

/** Paths open without a key: probes and metrics scrapers. */
export const PUBLIC_PATHS = new Set(['/health', '/metrics']);

function scopeAllows(scope: ApiScope, method: string, path: string): boolean {
  switch (scope) {
    case 'read-write':
      return true;
    case 'read':
      return method === 'GET' || method === 'HEAD';
    case 'capture-only':
      return method === 'POST' && (path === '/capture' || path === '/capture/');
  }
}

/**
 * Authenticates the key, spends a token from its bucket, then checks its scope. Requests without a
 * valid key spend from a bucket per client address, so every response carries rate-limit headers and
 * guessing keys is throttled too.
 */
@Injectable()
export class AccessMiddleware implements NestMiddleware {
  constructor(
    private readonly keys: ApiKeysService,
    private readonly limiter: RateLimiterService,
    private readonly metrics: GatewayMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async use(req: GatewayRequest, res: Response, next: NextFunction): Promise<void> {
    if (PUBLIC_PATHS.has(req.path)) return next();
    try {
      const header = req.headers['x-api-key'];
      const auth = await this.keys.authenticate(Array.isArray(header) ? header[0] : header);
      const decision = await this.limiter.take(auth.ok ? `key:${auth.principal.keyId}` : `ip:${req.ip}`);
      res.setHeader('X-RateLimit-Limit', String(decision.limit));
      res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
      res.setHeader('X-RateLimit-Reset', String(decision.resetAt));
      if (!decision.allowed) {
        this.metrics.rateLimited.inc();
        const s = decision.retryAfterSeconds;
        return writeError(
          res,
          { code: ErrorCode.RateLimitExceeded, message: `Rate limit exceeded; retry in ${s} second${s === 1 ? '' : 's'}.` },
          { 'Retry-After': String(s) },
        );
      }
      if (!auth.ok) return writeError(res, { code: ErrorCode.Unauthorized, message: auth.message });
      if (!scopeAllows(auth.principal.scope, req.method, req.path)) {
        return writeError(res, {
          code: ErrorCode.Forbidden,
          message: `This key's scope (${auth.principal.scope}) does not allow ${req.method} ${req.path}.`,
        });
      }
      req.principal = auth.principal;
      next();
    } catch (err) {
      this.logger.error({ err, request_id: req.id }, 'authentication failed unexpectedly');
      writeError(res, { code: ErrorCode.Internal, message: 'An internal error occurred.' });
    }
  }
}

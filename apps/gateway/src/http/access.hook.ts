import { DomainError, ErrorCode, Logger } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiKeyVerifier, AuthResult } from '../apikeys/api-key.verifier';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { RateLimiterService, setRateLimitHeaders } from '../rate-limit/rate-limiter.service';
import { LOGGER } from '../tokens';
import { authenticate, GatewayRequest, pathOf } from './request-context';
import { writeError } from './write-error';

/** Paths open without a key: probes, metrics scrapers, and the descriptions of the API and of its events. */
export const PUBLIC_PATHS = new Set(['/health', '/health/live', '/health/ready', '/metrics', '/openapi.json', '/asyncapi.json']);

/** The API reference UI (`/docs` and its assets). */
const isReferenceUi = (path: string) => path === '/docs' || path.startsWith('/docs/');

export const MCP_PATH = '/mcp';

/** The key: `X-Api-Key`, or on the MCP endpoint, where clients are built to send it so, `Authorization: Bearer`. */
function presentedKey(req: GatewayRequest, path: string): string | undefined {
  const header = req.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key !== undefined || path !== MCP_PATH) return key;
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1];
}

/**
 * Authenticates the key and spends a token from a bucket, the bucket first: a known key (verified by
 * this gateway within the last day) spends from its own bucket; any other request spends from the bucket of the
 * client address (the peer, or what a proxy listed in TRUSTED_PROXIES says) before its key is looked
 * up, so guessing keys is throttled without costing the database a query. A key found valid then gives
 * the address its token back and spends from its own bucket instead. ScopesGuard checks the key's
 * scope against the route's @Scopes after this.
 */
@Injectable()
export class AccessHook {
  constructor(
    private readonly keys: ApiKeyVerifier,
    private readonly limiter: RateLimiterService,
    private readonly metrics: GatewayMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** An `onRequest` hook: it answers refused requests itself, before their bodies are read. */
  async onRequest(req: GatewayRequest, reply: FastifyReply): Promise<unknown> {
    const path = pathOf(req);
    if (PUBLIC_PATHS.has(path) || isReferenceUi(path)) return;
    try {
      const presented = this.keys.parse(presentedKey(req, path));
      const known = presented.ok ? this.keys.known(presented.hash) : undefined;
      let decision = await this.limiter.take(known ? `key:${known.keyId}` : `ip:${req.ip}`);
      let auth: AuthResult = presented.ok ? { ok: false, message: 'Invalid API key.' } : presented;
      if (decision.allowed && presented.ok) {
        auth = await this.keys.verify(presented.hash);
        if (auth.ok && !known) {
          // A valid key: the request is the key's, not the address's.
          await this.limiter.refund(`ip:${req.ip}`);
          decision = await this.limiter.take(`key:${auth.principal.keyId}`);
        }
      }
      setRateLimitHeaders(reply, decision);
      if (!decision.allowed) {
        this.metrics.rateLimited.inc();
        const s = decision.retryAfterSeconds;
        return writeError(
          reply,
          { code: ErrorCode.RateLimitExceeded, message: `Rate limit exceeded; retry in ${s} second${s === 1 ? '' : 's'}.` },
          { 'Retry-After': String(s) },
        );
      }
      if (!auth.ok) return writeError(reply, { code: ErrorCode.Unauthorized, message: auth.message });
      authenticate(req, auth.principal);
    } catch (err) {
      if (err instanceof DomainError) return writeError(reply, err.toBody());
      this.logger.error({ err, request_id: req.id }, 'authentication failed unexpectedly');
      return writeError(reply, { code: ErrorCode.Internal, message: 'An internal error occurred.' });
    }
  }
}

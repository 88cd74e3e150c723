import { DomainError, ErrorBody, ErrorCode, Logger } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ApiKeyVerifier, AuthResult } from '../apikeys/api-key.verifier';
import { BearerTokens, IssuerUnreachable } from '../auth/bearer-tokens';
import { PROTECTED_RESOURCE_PATH, resourceMetadataUrl } from '../auth/protected-resource.controller';
import { SubjectUsers } from '../auth/subject-users';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { RateDecision, RateLimiterService, setRateLimitHeaders } from '../rate-limit/rate-limiter.service';
import { LOGGER } from '../tokens';
import { authenticate, callerOf, GatewayRequest, pathOf, Principal } from './request-context';
import { writeError } from './write-error';

/** Paths open without a key: the descriptions of the API and of its events. Probes and metrics are on the health port. */
export const PUBLIC_PATHS = new Set(['/openapi.json', '/asyncapi.json', PROTECTED_RESOURCE_PATH]);

/** The API reference UI (`/docs` and its assets). */
const isReferenceUi = (path: string) => path === '/docs' || path.startsWith('/docs/');

export const MCP_PATH = '/mcp';

const bearerOf = (req: GatewayRequest) => /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];

/**
 * What the request authenticates with: `X-Api-Key`; else, where bearer tokens are configured, a bearer
 * token that is not an API key; else on the MCP endpoint, where clients are built to send a key so,
 * `Authorization: Bearer` as a key.
 */
function presented(req: GatewayRequest, path: string, tokens: boolean): { key?: string; token?: string } {
  const header = req.headers['x-api-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key !== undefined) return { key };
  const bearer = bearerOf(req);
  if (bearer !== undefined && tokens && !bearer.startsWith('crm_')) return { token: bearer };
  return { key: path === MCP_PATH ? bearer : undefined };
}

/**
 * Authenticates the key or bearer token and spends a token from a bucket. A key's bucket first: a known key (verified by
 * this gateway within the last day) spends from its own bucket; any other request spends from the bucket of the
 * client address (the peer, or what a proxy listed in TRUSTED_PROXIES says) before its key is looked
 * up, so guessing keys is throttled without costing the database a query. A key found valid then gives
 * the address its token back and spends from its own bucket instead. A bearer token does the same: the
 * address's bucket before the token is verified, its subject's once it is (the address's refunded). ScopesGuard checks the caller's permissions against the route's
 * @Scopes after this, the same for both.
 */
@Injectable()
export class AccessHook {
  constructor(
    private readonly keys: ApiKeyVerifier,
    private readonly tokens: BearerTokens,
    private readonly subjects: SubjectUsers,
    private readonly limiter: RateLimiterService,
    private readonly metrics: GatewayMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** An `onRequest` hook: it answers refused requests itself, before their bodies are read. */
  async onRequest(req: GatewayRequest, reply: FastifyReply): Promise<unknown> {
    const path = pathOf(req);
    if (PUBLIC_PATHS.has(path) || isReferenceUi(path)) return;
    try {
      const credential = presented(req, path, this.tokens.configured !== undefined);
      if (credential.token !== undefined) return await this.withToken(req, reply, credential.token, path);
      const parsed = this.keys.parse(credential.key);
      const known = parsed.ok ? this.keys.known(parsed.hash) : undefined;
      let decision = await this.limiter.take(known ? callerOf(known) : `ip:${req.ip}`);
      let auth: AuthResult = parsed.ok ? { ok: false, message: 'Invalid API key.' } : parsed;
      if (decision.allowed && parsed.ok) {
        auth = await this.keys.verify(parsed.hash);
        if (auth.ok && !known) {
          // A valid key: the request is the key's, not the address's.
          await this.limiter.refund(`ip:${req.ip}`);
          decision = await this.limiter.take(callerOf(auth.principal));
        }
      }
      if (!this.allowed(reply, decision)) return reply;
      if (!auth.ok) return this.unauthorized(reply, path, { code: ErrorCode.Unauthorized, message: auth.message });
      authenticate(req, auth.principal);
    } catch (err) {
      if (err instanceof DomainError) return writeError(reply, err.toBody());
      this.logger.error({ err, request_id: req.id }, 'authentication failed unexpectedly');
      return writeError(reply, { code: ErrorCode.Internal, message: 'An internal error occurred.' });
    }
  }

  /**
   * A bearer token: the address's bucket first, as for a key not yet known, so that verifying (a signature,
   * perhaps a fetch of the issuer's keys) is never done for an address that has spent its tokens; then, once
   * the token is good, the address gets its token back and the subject's bucket pays instead.
   */
  private async withToken(req: GatewayRequest, reply: FastifyReply, token: string, path: string): Promise<unknown> {
    if (!this.allowed(reply, await this.limiter.take(`ip:${req.ip}`))) return reply;
    let result;
    try {
      result = await this.tokens.verify(token);
    } catch (err) {
      if (!(err instanceof IssuerUnreachable)) throw err;
      return writeError(reply, err.toBody(), { 'Retry-After': String(err.retryAfterSeconds) });
    }
    if (!result.ok) return this.unauthorized(reply, path, result.error.toBody());
    const { subject, permissions } = result.token;
    await this.limiter.refund(`ip:${req.ip}`);
    if (!this.allowed(reply, await this.limiter.take(callerOf({ subject, scope: 'custom', permissions })))) return reply;
    const userId = await this.subjects.userOf(subject, req.id);
    const principal: Principal = { subject, scope: 'custom', permissions, expiresAt: result.token.expiresAt, ...(userId ? { userId } : {}) };
    authenticate(req, principal);
  }

  /** Sets the rate-limit headers; answers 429 when the bucket is empty. */
  private allowed(reply: FastifyReply, decision: RateDecision): boolean {
    setRateLimitHeaders(reply, decision);
    if (decision.allowed) return true;
    this.metrics.rateLimited.inc();
    const s = decision.retryAfterSeconds;
    writeError(
      reply,
      { code: ErrorCode.RateLimitExceeded, message: `Rate limit exceeded; retry in ${s} second${s === 1 ? '' : 's'}.` },
      { 'Retry-After': String(s) },
    );
    return false;
  }

  /**
   * 401. On /mcp, where bearer tokens are configured, with the challenge the MCP authorization
   * specification asks for: where the client learns which authorization server issues tokens for this API.
   */
  private unauthorized(reply: FastifyReply, path: string, error: ErrorBody): FastifyReply {
    const settings = this.tokens.configured;
    if (path !== MCP_PATH || !settings) return writeError(reply, error);
    const metadata = resourceMetadataUrl(settings.audience);
    return writeError(reply, error, { 'WWW-Authenticate': metadata ? `Bearer resource_metadata="${metadata}"` : 'Bearer' });
  }
}

import { DomainError, ErrorCode, FieldIssue, Logger } from '@crm/common';
import { permissionProblem } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import type { JWTPayload, JWTVerifyGetKey } from 'jose';
import { BearerConfig, GATEWAY_CONFIG, GatewayConfig } from '../config';
import { LOGGER } from '../tokens';

/** A verified token: who it speaks for, and what it may do (its `scope` claim's permissions). */
export interface VerifiedToken {
  subject: string;
  permissions: string[];
  /** The `exp` claim: a key made with the token may not outlive it. */
  expiresAt: Date;
}

export type TokenResult = { ok: true; token: VerifiedToken } | { ok: false; error: DomainError };

/** Three base64url segments: what a compact JWS looks like, and an API key never does. */
export const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Only signatures made with a private key: a shared secret in a public JWKS would let anyone sign. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** After a failed fetch of the JWKS, the next waits this long, doubling up to the cap: a down issuer is not hammered. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
const FETCH_TIMEOUT_MS = 5000;
/** The keys fetched are used this long before they are fetched again (jose's default for a remote JWKS). */
const KEYS_MAX_AGE_MS = 10 * 60 * 1000;

/**
 * The JWKS could not be had: the fetch failed (network, timeout, not 200) or its answer is no JWKS. The
 * only failure that is not the token's: it backs off, where any other refuses that one token.
 */
class JwksUnavailable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

type Jose = typeof import('jose');
let loadedJose: Jose | undefined;
/** jose loads with the first token to verify: a gateway without bearer tokens (and most test stacks) never needs it. */
async function jose(): Promise<Jose> {
  return (loadedJose ??= await import('jose'));
}

const refused = (code: string, message: string): TokenResult => {
  const detail: FieldIssue = { field: 'authorization', code, message };
  return { ok: false, error: new DomainError(ErrorCode.Unauthorized, message, [detail]) };
};

/**
 * Verifies `Authorization: Bearer <JWT>` against the issuer's JWKS (docs/api.md, "Bearer tokens"): the
 * keys are fetched when a token first needs them, kept, and fetched again for a `kid` not among them
 * (at most once per AUTH_JWT_JWKS_COOLDOWN_SECONDS). While the keys cannot be fetched a token is
 * neither accepted nor called invalid: it gets 503 with Retry-After, and fetching is retried with a
 * growing pause. Any other failure refuses the one token (401). The token itself is never logged, nor
 * put in an error.
 */
@Injectable()
export class BearerTokens {
  private readonly settings?: BearerConfig;
  private keys?: JWTVerifyGetKey;
  private fetchedAt = 0;
  private fetching?: Promise<void>;
  private failures = 0;
  private retryAt = 0;

  constructor(
    @Inject(GATEWAY_CONFIG) config: Pick<GatewayConfig, 'bearer'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.settings = config.bearer;
  }

  get configured(): BearerConfig | undefined {
    return this.settings;
  }

  async verify(token: string): Promise<TokenResult> {
    const settings = this.settings!;
    if (!JWT_SHAPE.test(token)) return refused('malformed_token', 'The bearer token is not a JWT.');
    const wait = this.retryAt - Date.now();
    if (wait > 0) throw this.unavailable(wait);
    const { jwtVerify } = await jose();
    try {
      const { payload } = await jwtVerify(token, this.keyFor, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: ALGORITHMS,
        clockTolerance: settings.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp'],
      });
      this.failures = 0;
      return {
        ok: true,
        token: { subject: payload.sub!, permissions: permissionsOf(payload, settings.permissionsClaim), expiresAt: new Date(payload.exp! * 1000) },
      };
    } catch (err) {
      if (!(err instanceof JwksUnavailable)) {
        this.failures = 0;
        return this.judge(err);
      }
      // The keys could not be fetched: the token is neither good nor bad yet.
      const pause = Math.min(RETRY_FIRST_MS * 2 ** this.failures, RETRY_MAX_MS);
      this.failures++;
      this.retryAt = Date.now() + pause;
      this.logger.warn({ err: err.reason, retry_in_ms: pause }, 'could not fetch the JWKS of the bearer token issuer');
      throw this.unavailable(pause);
    }
  }

  /**
   * The key a token names, from the issuer's JWKS: fetched when first needed or older than
   * KEYS_MAX_AGE_MS, and again for a `kid` it does not hold once the cooldown since the last fetch is over.
   * Fetched here rather than by jose's remote key set so that a failed fetch is told apart, by where it
   * happened, from every other failure.
   */
  private readonly keyFor: JWTVerifyGetKey = async (header, token) => {
    if (!this.keys || Date.now() - this.fetchedAt > KEYS_MAX_AGE_MS) await this.fetchKeys();
    try {
      return await this.keys!(header, token);
    } catch (err) {
      const cooling = Date.now() < this.fetchedAt + this.settings!.jwksCooldownSeconds * 1000;
      if (!(err instanceof loadedJose!.errors.JWKSNoMatchingKey) || cooling) throw err;
      await this.fetchKeys();
      return this.keys!(header, token);
    }
  };

  /** One fetch at a time, shared by the tokens waiting on it. */
  private fetchKeys(): Promise<void> {
    this.fetching ??= this.fetchOnce().finally(() => (this.fetching = undefined));
    return this.fetching;
  }

  private async fetchOnce(): Promise<void> {
    let document: unknown;
    try {
      // No redirects: the keys come from the configured URL (https, checked at start-up), not wherever it points.
      const res = await fetch(this.settings!.jwksUrl, {
        redirect: 'error',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { accept: 'application/json' },
      });
      if (res.status !== 200) throw new JwksUnavailable(`the JWKS URL answered ${res.status}`);
      document = await res.json();
    } catch (err) {
      throw err instanceof JwksUnavailable ? err : new JwksUnavailable(`the JWKS could not be fetched: ${(err as Error).message}`);
    }
    try {
      const { createLocalJWKSet } = await jose();
      this.keys = createLocalJWKSet(document as Parameters<Jose['createLocalJWKSet']>[0]);
    } catch (err) {
      throw new JwksUnavailable(`the JWKS document is not a key set: ${(err as Error).message}`);
    }
    this.fetchedAt = Date.now();
  }

  /** What is wrong with the token: the JWKS was had, so any failure is the token's (or its key's), never all tokens'. */
  private judge(err: unknown): TokenResult {
    const { errors } = loadedJose!;
    if (err instanceof errors.JWTExpired) return refused('token_expired', 'The bearer token has expired.');
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'nbf') return refused('token_not_yet_valid', 'The bearer token is not valid yet (nbf).');
      if (err.claim === 'aud') return refused('wrong_audience', 'The bearer token is not meant for this API (aud).');
      if (err.claim === 'iss') return refused('wrong_issuer', 'The bearer token comes from another issuer (iss).');
      return refused('malformed_token', `The bearer token's ${err.claim} claim is missing or invalid.`);
    }
    if (err instanceof errors.JWSSignatureVerificationFailed) return refused('bad_signature', "The bearer token's signature does not verify.");
    if (err instanceof errors.JWKSNoMatchingKey) return refused('unknown_key', "The bearer token is signed with a key the issuer's JWKS does not hold (kid).");
    if (err instanceof errors.JWKSMultipleMatchingKeys) return refused('unknown_key', "The bearer token's key is ambiguous in the issuer's JWKS (kid).");
    if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
      return refused('malformed_token', "The bearer token's signature algorithm is not accepted.");
    }
    if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return refused('malformed_token', 'The bearer token is malformed.');
    // Say, an RSA key under 2048 bits, which jose will not verify with: that key's tokens are refused, and only theirs.
    this.logger.warn({ err: (err as Error).message }, 'a bearer token could not be verified with its key');
    return refused('unusable_key', "The bearer token's key in the issuer's JWKS cannot be used to verify it.");
  }

  private unavailable(waitMs: number): IssuerUnreachable {
    return new IssuerUnreachable(Math.max(1, Math.ceil(waitMs / 1000)));
  }
}

/** 503: the issuer's keys cannot be fetched, so a token can be neither accepted nor refused; Retry-After says when to try. */
export class IssuerUnreachable extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super(ErrorCode.ServiceUnavailable, "The bearer token's issuer cannot be reached to check the token; try again shortly.");
  }
}

/**
 * The permissions in the claim `claim` names: `scope` unless AUTH_JWT_PERMISSIONS_CLAIM names another,
 * such as the roles an identity provider maps from what the user was granted (`crm_permissions`, or a
 * dotted path into nested claims, `resource_access.crm.roles`). A space-separated string or an array of
 * strings. Scopes of the issuer's own (`openid`, `profile`, `email`) sit beside ours in the same claim:
 * what is not a permission is left out rather than refusing the token.
 */
export function permissionsOf(payload: JWTPayload, claim = 'scope'): string[] {
  let value: unknown = payload;
  // The token's own members only: a path of `constructor` must not reach Object's properties.
  for (const step of claim.split('.'))
    value = value !== null && typeof value === 'object' && Object.hasOwn(value, step) ? (value as Record<string, unknown>)[step] : undefined;
  const scopes = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : [];
  return scopes.filter((s): s is string => typeof s === 'string' && s !== '' && permissionProblem(s) === undefined);
}

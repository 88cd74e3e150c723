import { DomainError, ErrorCode, FieldIssue, Logger } from '@crm/common';
import { permissionProblem } from '@crm/contracts';
import { Inject, Injectable } from '@nestjs/common';
import { createRemoteJWKSet, errors, JWTPayload, jwtVerify } from 'jose';
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

const refused = (code: string, message: string): TokenResult => {
  const detail: FieldIssue = { field: 'authorization', code, message };
  return { ok: false, error: new DomainError(ErrorCode.Unauthorized, message, [detail]) };
};

/**
 * Verifies `Authorization: Bearer <JWT>` against the issuer's JWKS (docs/api.md, "Bearer tokens"): the
 * keys are fetched when a token first needs them, kept, and fetched again for a `kid` not among them
 * (at most once per AUTH_JWT_JWKS_COOLDOWN_SECONDS). While the keys cannot be fetched a token is
 * neither accepted nor called invalid: it gets 503 with Retry-After, and fetching is retried with a
 * growing pause. The token itself is never logged, nor put in an error.
 */
@Injectable()
export class BearerTokens {
  private readonly settings?: BearerConfig;
  private readonly jwks?: ReturnType<typeof createRemoteJWKSet>;
  private failures = 0;
  private retryAt = 0;

  constructor(
    @Inject(GATEWAY_CONFIG) config: Pick<GatewayConfig, 'bearer'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.settings = config.bearer;
    if (this.settings) {
      this.jwks = createRemoteJWKSet(new URL(this.settings.jwksUrl), {
        cooldownDuration: this.settings.jwksCooldownSeconds * 1000,
        timeoutDuration: FETCH_TIMEOUT_MS,
      });
    }
  }

  get configured(): BearerConfig | undefined {
    return this.settings;
  }

  async verify(token: string): Promise<TokenResult> {
    const settings = this.settings!;
    if (!JWT_SHAPE.test(token)) return refused('malformed_token', 'The bearer token is not a JWT.');
    const wait = this.retryAt - Date.now();
    if (wait > 0) throw this.unavailable(wait);
    try {
      const { payload } = await jwtVerify(token, this.jwks!, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms: ALGORITHMS,
        clockTolerance: settings.clockToleranceSeconds,
        requiredClaims: ['sub', 'exp'],
      });
      this.failures = 0;
      return { ok: true, token: { subject: payload.sub!, permissions: permissionsOf(payload), expiresAt: new Date(payload.exp! * 1000) } };
    } catch (err) {
      const answer = this.judge(err);
      if (answer) {
        this.failures = 0;
        return answer;
      }
      // The keys could not be fetched: the token is neither good nor bad yet.
      const pause = Math.min(RETRY_FIRST_MS * 2 ** this.failures, RETRY_MAX_MS);
      this.failures++;
      this.retryAt = Date.now() + pause;
      this.logger.warn({ err: (err as Error).message, retry_in_ms: pause }, 'could not fetch the JWKS of the bearer token issuer');
      throw this.unavailable(pause);
    }
  }

  /** What is wrong with the token, or undefined when the JWKS could not be fetched. */
  private judge(err: unknown): TokenResult | undefined {
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
    return undefined;
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
 * The `scope` claim's permissions. Scopes of the issuer's own (`openid`, `profile`, `email`) sit beside
 * ours in the same claim: what is not a permission is left out rather than refusing the token.
 */
export function permissionsOf(payload: JWTPayload): string[] {
  const claim = payload.scope;
  const scopes = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim : [];
  return scopes.filter((s): s is string => typeof s === 'string' && s !== '' && permissionProblem(s) === undefined);
}

import { databaseUnavailable, isDatabaseUnavailable, Logger } from '@crm/common';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { KeyPrincipal as Principal } from '../http/request-context';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { LOGGER } from '../tokens';
import { ApiKey } from './api-key.entity';
import { permissionsOf } from './api-key.presenter';
import { API_KEY_SHAPE, hashApiKey, sameHash } from './api-key.secret';

export type AuthResult = { ok: true; principal: Principal } | { ok: false; message: string };

/** A presented key whose shape is right, ready to look up; or why it cannot be a key. */
export type PresentedKey = { ok: true; hash: string } | { ok: false; message: string };

interface Verified {
  principal: Principal;
  verifiedAt: number;
  expiresAt: number | null;
}

const LAST_USED_RESOLUTION_MS = 60_000;
/** How long a verified key counts as known to the limiter: its requests spend from its own bucket first. */
const KNOWN_KEY_MS = 24 * 60 * 60_000;
/** Keys remembered per gateway; the oldest check is forgotten first. */
const MAX_REMEMBERED_KEYS = 10_000;

/**
 * Resolves presented API keys. A key verified in the database within API_KEY_CACHE_SECONDS is accepted
 * from memory; revocations reach every replica's memory at once (KeyRevocations), and expiry is checked
 * on every request. Each replica also remembers when it last verified each key:
 * - while the database is unreachable, a key verified within API_KEY_OUTAGE_GRACE_SECONDS is still
 *   accepted with the scope it had (any other key gets 503);
 * - the access hook spends a request of a key verified within the last day from the key's own
 *   bucket before looking it up, and of any other key from the client address's bucket, so guessing
 *   keys is throttled before it costs a query.
 */
@Injectable()
export class ApiKeyVerifier {
  private readonly verified = new Map<string, Verified>();
  /** last_used_at is written at most once a minute per key, not on every request. */
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: GatewayMetrics,
    @Inject(GATEWAY_CONFIG) private readonly config: Pick<GatewayConfig, 'keyEnvironment' | 'keyOutageGraceSeconds' | 'apiKeyCacheSeconds'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Checks what can be checked without the database. */
  parse(presented: string | undefined): PresentedKey {
    if (!presented) return { ok: false, message: 'Missing API key: send it in the X-Api-Key header.' };
    const shape = API_KEY_SHAPE.exec(presented);
    if (!shape) return { ok: false, message: 'Invalid API key.' };
    if (shape[1] !== this.config.keyEnvironment) {
      return { ok: false, message: `This is a ${shape[1]} key; this deployment accepts ${this.config.keyEnvironment} keys.` };
    }
    return { ok: true, hash: hashApiKey(presented) };
  }

  /** The key's principal if this gateway verified it within the last day and it has not expired since. */
  known(hash: string): Principal | undefined {
    return this.verifiedWithin(hash, KNOWN_KEY_MS);
  }

  /** The key's principal if this gateway verified it within the outage grace period and it has not expired since. */
  recentlyVerified(hash: string): Principal | undefined {
    return this.verifiedWithin(hash, this.config.keyOutageGraceSeconds * 1000);
  }

  private verifiedWithin(hash: string, windowMs: number, now = Date.now()): Principal | undefined {
    const entry = this.verified.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= now) {
      this.verified.delete(hash);
      return undefined;
    }
    return now - entry.verifiedAt <= windowMs ? entry.principal : undefined;
  }

  /** Forgets a revoked key, so its next request is checked in the database. */
  forget(keyId: string): void {
    for (const [hash, entry] of this.verified) if (entry.principal.keyId === keyId) this.verified.delete(hash);
  }

  /** Forgets every key, when revocation notices may have been missed. */
  forgetAll(): void {
    this.verified.clear();
  }

  /**
   * The key's principal from memory if verified within API_KEY_CACHE_SECONDS; otherwise looks it up, and
   * while the database is unreachable falls back to a recent verification or answers 503.
   */
  async verify(hash: string): Promise<AuthResult> {
    const cached = this.verifiedWithin(hash, this.config.apiKeyCacheSeconds * 1000);
    if (cached) {
      this.touch(cached.keyId);
      return { ok: true, principal: cached };
    }
    this.metrics.apiKeyLookups.inc();
    let key:
      | {
          id: string;
          scope: ApiKey['scope'];
          scopes: string[] | null;
          user_id: string | null;
          key_hash: string;
          revoked: boolean;
          expired: boolean;
          expires_at: Date | null;
        }
      | undefined;
    try {
      // On every request: a plain indexed query, without the ORM's per-call query building.
      [key] = await this.dataSource.query(
        `SELECT id, scope, scopes, user_id, key_hash, revoked_at IS NOT NULL AS revoked, coalesce(expires_at <= now(), false) AS expired, expires_at
         FROM api_keys WHERE key_hash = $1`,
        [hash],
      );
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      const principal = this.recentlyVerified(hash);
      if (!principal) throw databaseUnavailable();
      this.metrics.apiKeyOutageAccepted.inc();
      return { ok: true, principal };
    }
    const ok = key && sameHash(key.key_hash, hash) && !key.revoked && !key.expired;
    if (!key || !ok) this.verified.delete(hash);
    if (!key || !sameHash(key.key_hash, hash)) return { ok: false, message: 'Invalid API key.' };
    if (key.revoked) return { ok: false, message: 'This API key has been revoked.' };
    if (key.expired) return { ok: false, message: 'This API key has expired.' };
    const principal: Principal = { keyId: key.id, scope: key.scope, permissions: permissionsOf(key), ...(key.user_id ? { userId: key.user_id } : {}) };
    this.remember(hash, principal, key.expires_at);
    this.touch(key.id);
    return { ok: true, principal };
  }

  private remember(hash: string, principal: Principal, expiresAt: Date | null): void {
    this.verified.delete(hash); // re-inserted last: the Map's order is the order of last verification
    this.verified.set(hash, { principal, verifiedAt: Date.now(), expiresAt: expiresAt ? expiresAt.getTime() : null });
    if (this.verified.size > MAX_REMEMBERED_KEYS) this.verified.delete(this.verified.keys().next().value!);
  }

  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastTouched.set(keyId, now);
    this.dataSource
      .query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, [keyId])
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not record API key use'));
  }
}

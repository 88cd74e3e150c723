import { isIP } from 'net';
import { BaseConfig, ConfigError, DEFAULT_REDIS_URL, enumVar, Env, intVar, loadBaseConfig, optionalVar, stringVar, urlVar } from '@crm/common';

export interface GatewayConfig extends BaseConfig {
  port: number;
  host: string;
  /** The internal port: probes, the full status and metrics (never the API port, which an Ingress may publish). */
  healthPort: number;
  healthHost: string;
  redisUrl: string;
  /** Sustained rate per API key (token bucket refill), requests per minute. */
  rateLimitPerMinute: number;
  /** Bucket capacity: how many requests a key may send at once after a quiet period. */
  rateLimitBurst: number;
  keyEnvironment: 'live' | 'test';
  bootstrapApiKey?: string;
  /**
   * The proxies whose `X-Forwarded-For` is believed (addresses, CIDRs or `loopback`); empty trusts
   * none, and the client address is the peer's. Named private ranges are refused: list your proxies.
   */
  trustedProxies: string[];
  /** How long a key verified by this gateway stays usable from memory while the database is unreachable. */
  keyOutageGraceSeconds: number;
  /** How long a key verified in the database is accepted from memory; revocations clear it at once. */
  apiKeyCacheSeconds: number;
  /** On SIGTERM, how long requests in flight and keep-alive connections get before they are cut. */
  shutdownGraceMs: number;
  /** How long the health check waits for each service. */
  healthTimeoutMs: number;
  /** Bearer tokens from the deployment's identity provider (docs/api.md, "Bearer tokens"); absent when not configured. */
  bearer?: BearerConfig;
}

export interface BearerConfig {
  /** AUTH_JWT_ISSUER: the tokens' `iss`, and the authorization server the metadata document names. */
  issuer: string;
  /** AUTH_JWT_AUDIENCE: the tokens' `aud` must hold it (RFC 8707: this deployment); the metadata's `resource`. */
  audience: string;
  /** AUTH_JWT_JWKS_URL: where the issuer publishes its signing keys. */
  jwksUrl: string;
  /** How long after a fetch of the JWKS an unknown `kid` waits before it may fetch again. */
  jwksCooldownSeconds: number;
  /** How far `exp` and `nbf` may be off, for clocks that do not quite agree. */
  clockToleranceSeconds: number;
  /** AUTH_JWT_PERMISSIONS_CLAIM: the claim the permissions are read from (`scope` by default; a dotted path reaches nested claims). */
  permissionsClaim: string;
}

export const BEARER_VARIABLES = ['AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE', 'AUTH_JWT_JWKS_URL'] as const;

/** The gateway's health port by default: the one after the four services' (3001-3004). */
export const DEFAULT_GATEWAY_HEALTH_PORT = 3005;

export const BOOTSTRAP_KEY_SHAPE = /^crm_(live|test)_[A-Za-z0-9]{32,128}$/;

export function loadGatewayConfig(env: Env): GatewayConfig {
  const config: GatewayConfig = {
    ...loadBaseConfig(env),
    port: intVar(env, 'PORT', 3000, { min: 0, max: 65535 }),
    host: stringVar(env, 'HOST', '0.0.0.0'),
    healthPort: intVar(env, 'HEALTH_PORT', DEFAULT_GATEWAY_HEALTH_PORT, { min: 0, max: 65535 }),
    healthHost: stringVar(env, 'HEALTH_HOST', '0.0.0.0'),
    redisUrl: urlVar(env, 'REDIS_URL', DEFAULT_REDIS_URL, ['redis', 'rediss']),
    rateLimitPerMinute: intVar(env, 'RATE_LIMIT_PER_MINUTE', 1000, { min: 1, max: 1_000_000 }),
    rateLimitBurst: intVar(env, 'RATE_LIMIT_BURST', 1000, { min: 1, max: 1_000_000 }),
    keyEnvironment: enumVar(env, 'CRM_KEY_ENV', 'live', ['live', 'test'] as const),
    bootstrapApiKey: optionalVar(env, 'CRM_BOOTSTRAP_API_KEY'),
    trustedProxies: trustedProxies(env),
    keyOutageGraceSeconds: intVar(env, 'API_KEY_OUTAGE_GRACE_SECONDS', 300, { min: 0, max: 3600 }),
    apiKeyCacheSeconds: intVar(env, 'API_KEY_CACHE_SECONDS', 60, { min: 0, max: 3600 }),
    shutdownGraceMs: intVar(env, 'SHUTDOWN_GRACE_MS', 20_000, { min: 0, max: 300_000 }),
    healthTimeoutMs: intVar(env, 'HEALTH_TIMEOUT_MS', 1000, { min: 50, max: 30000 }),
    bearer: bearerConfig(env),
  };
  if (config.bootstrapApiKey) {
    const match = BOOTSTRAP_KEY_SHAPE.exec(config.bootstrapApiKey);
    if (!match) throw new ConfigError('CRM_BOOTSTRAP_API_KEY must look like crm_live_<32+ letters and digits> (or crm_test_...)');
    if (match[1] !== config.keyEnvironment) {
      throw new ConfigError(`CRM_BOOTSTRAP_API_KEY is a ${match[1]} key but CRM_KEY_ENV is ${config.keyEnvironment}`);
    }
  }
  return config;
}

/** The three variables come together or not at all: a half-configured issuer would silently refuse every token. */
function bearerConfig(env: Env): BearerConfig | undefined {
  const given = {
    AUTH_JWT_ISSUER: optionalVar(env, 'AUTH_JWT_ISSUER'),
    AUTH_JWT_AUDIENCE: optionalVar(env, 'AUTH_JWT_AUDIENCE'),
    AUTH_JWT_JWKS_URL: optionalVar(env, 'AUTH_JWT_JWKS_URL'),
  };
  const set = BEARER_VARIABLES.filter((name) => given[name] !== undefined);
  if (set.length === 0) return undefined;
  if (set.length < BEARER_VARIABLES.length) {
    const missing = BEARER_VARIABLES.filter((name) => given[name] === undefined);
    const are = (names: readonly string[]) => `${names.join(' and ')} ${names.length === 1 ? 'is' : 'are'}`;
    throw new ConfigError(`${are(set)} set but ${are(missing)} not: bearer tokens need all of ${BEARER_VARIABLES.join(', ')} (or none)`);
  }
  return {
    issuer: given.AUTH_JWT_ISSUER!,
    audience: given.AUTH_JWT_AUDIENCE!,
    jwksUrl: jwksUrl(env),
    jwksCooldownSeconds: intVar(env, 'AUTH_JWT_JWKS_COOLDOWN_SECONDS', 30, { min: 0, max: 3600 }),
    clockToleranceSeconds: intVar(env, 'AUTH_JWT_CLOCK_TOLERANCE_SECONDS', 30, { min: 0, max: 300 }),
    permissionsClaim: permissionsClaim(env),
  };
}

const CLAIM_PATH = /^[A-Za-z0-9_:-]+(\.[A-Za-z0-9_:-]+){0,7}$/;

function permissionsClaim(env: Env): string {
  const claim = optionalVar(env, 'AUTH_JWT_PERMISSIONS_CLAIM') ?? 'scope';
  if (!CLAIM_PATH.test(claim))
    throw new ConfigError(`AUTH_JWT_PERMISSIONS_CLAIM must be a claim name, or names joined by dots for a nested claim (got '${claim}')`);
  return claim;
}

/** Whether `host` (as URL.hostname has it) is this machine: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/**
 * The keys every token is checked against: over plain http anyone on the path could swap in their own
 * and sign any token, so https is required, but for loopback, where tests and local development run an issuer.
 */
function jwksUrl(env: Env): string {
  const value = urlVar(env, 'AUTH_JWT_JWKS_URL', '', ['https', 'http']);
  const url = new URL(value);
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(`AUTH_JWT_JWKS_URL must be an https:// URL (http:// only for 127.0.0.1, ::1 or localhost); got host '${url.hostname}'`);
  }
  return value;
}

const CIDR = /^(?:\d{1,3}(?:\.\d{1,3}){3}(?:\/(?:[0-9]|[12][0-9]|3[0-2]))?|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?:\/(?:[0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))?)$/;

function trustedProxies(env: Env): string[] {
  const entries = (env.TRUSTED_PROXIES ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const address = entry.split('/')[0];
    if (entry !== 'loopback' && (!CIDR.test(entry) || isIP(address) === 0)) {
      throw new ConfigError(`TRUSTED_PROXIES: '${entry}' is not an IP address, a CIDR or 'loopback'`);
    }
  }
  return entries;
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

import { createHash } from 'crypto';

/**
 * Configuration comes from environment variables with safe local defaults. A bad value stops start-up
 * with one line that names the variable.
 */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

export function stringVar(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

export function optionalVar(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

export function urlVar(env: Env, name: string, fallback: string, protocols: string[]): string {
  const value = stringVar(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    // Not echoed: a URL may carry a password.
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}://, got '${parsed.protocol}//'`);
  }
  return value;
}

export function intVar(env: Env, name: string, fallback: number, bounds: { min?: number; max?: number } = {}): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got '${raw}'`);
  const value = Number(raw);
  if (bounds.min !== undefined && value < bounds.min) throw new ConfigError(`${name} must be at least ${bounds.min}, got ${value}`);
  if (bounds.max !== undefined && value > bounds.max) throw new ConfigError(`${name} must be at most ${bounds.max}, got ${value}`);
  return value;
}

export function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
  if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

export function enumVar<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const value = stringVar(env, name, fallback);
  if (!allowed.includes(value as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/** A PostgreSQL role name, used unquoted in GRANT statements, so only a plain identifier is accepted. */
export function roleVar(env: Env, name: string): string | undefined {
  const value = optionalVar(env, name);
  if (value !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(value)) {
    throw new ConfigError(`${name} must be a lowercase PostgreSQL role name (letters, digits, '_'), got '${value}'`);
  }
  return value;
}

/** Settings every process of the system shares. */
export interface BaseConfig {
  databaseUrl: string;
  natsUrl: string;
  /** The process's own NATS user (docs/deployment.md, "NATS users"); unset, it connects without credentials. */
  natsUser?: string;
  natsPassword?: string;
  /** Prefix of every NATS subject, JetStream name and Redis key, so environments can share one broker. */
  namespace: string;
  logLevel: string;
  rpcTimeoutMs: number;
  /** How long an Idempotency-Key's result is replayed; the gateway and the services keep it as long. */
  idempotencyTtlHours: number;
  /** Copies of the JetStream event stream (1 on a single NATS server, 3 in a cluster). */
  jetstreamReplicas: number;
  /** How long the event stream keeps events for consumers that fell behind, in hours. */
  jetstreamMaxAgeHours: number;
  /** Most bytes the event stream keeps per replica, the oldest dropped first past it; 0 sets no size limit. */
  jetstreamMaxBytes: number;
  /** Most pooled PostgreSQL connections this process opens; unset, each process uses its own default. */
  databasePoolSize?: number;
  /**
   * `run`: the process applies pending migrations at start (one machine, Compose, tests). `verify`: it only
   * checks that none are pending and refuses to start otherwise, so it can connect as a role without DDL
   * rights while a migration Job, connected as a DDL-capable role, applies them (Kubernetes).
   */
  databaseMigrations: 'run' | 'verify';
  /** In `verify` mode, how long start-up waits for the migration Job before giving up (pods may start first). */
  databaseMigrationsWaitSeconds: number;
  /** The role application pods connect as; `migrate` grants it read and write on every table it creates. */
  databaseAppRole?: string;
  /** What list cursors are signed with, the current first (see CursorCodec). */
  cursorSecrets: string[];
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/crm';
export const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function loadBaseConfig(env: Env): BaseConfig {
  const namespace = stringVar(env, 'CRM_NAMESPACE', 'crm');
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(namespace)) {
    throw new ConfigError(`CRM_NAMESPACE must be lowercase letters, digits and '_' (starting with a letter), got '${namespace}'`);
  }
  const databaseUrl = urlVar(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres', 'postgresql']);
  return {
    databaseUrl,
    natsUrl: urlVar(env, 'NATS_URL', DEFAULT_NATS_URL, ['nats', 'tls']),
    ...natsCredentials(env),
    namespace,
    logLevel: enumVar(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    rpcTimeoutMs: intVar(env, 'RPC_TIMEOUT_MS', 5000, { min: 100, max: 60000 }),
    idempotencyTtlHours: intVar(env, 'IDEMPOTENCY_TTL_HOURS', 24, { min: 1, max: 24 * 30 }),
    jetstreamReplicas: intVar(env, 'JETSTREAM_REPLICAS', 1, { min: 1, max: 5 }),
    jetstreamMaxAgeHours: intVar(env, 'JETSTREAM_MAX_AGE_HOURS', 168, { min: 1, max: 24 * 366 }),
    jetstreamMaxBytes: intVar(env, 'JETSTREAM_MAX_BYTES', 0, { min: 0, max: Number.MAX_SAFE_INTEGER }),
    databaseMigrations: enumVar(env, 'DATABASE_MIGRATIONS', 'run', ['run', 'verify'] as const),
    databaseMigrationsWaitSeconds: intVar(env, 'DATABASE_MIGRATIONS_WAIT_SECONDS', 240, { min: 0, max: 3600 }),
    databaseAppRole: roleVar(env, 'DATABASE_APP_ROLE'),
    databasePoolSize:
      env.DATABASE_POOL_SIZE === undefined || env.DATABASE_POOL_SIZE === '' ? undefined : intVar(env, 'DATABASE_POOL_SIZE', 10, { min: 2, max: 200 }),
    cursorSecrets: loadCursorSecrets(env, databaseUrl),
  };
}

/**
 * NATS_USER and NATS_PASSWORD, both or neither. The NATS client ignores a user and password written into
 * a URL and would connect without them, so NATS_URL carrying them is refused (without echoing it).
 */
function natsCredentials(env: Env): { natsUser?: string; natsPassword?: string } {
  const url = new URL(stringVar(env, 'NATS_URL', DEFAULT_NATS_URL));
  if (url.username || url.password) throw new ConfigError('NATS_URL must not carry a user or password; set NATS_USER and NATS_PASSWORD');
  const natsUser = optionalVar(env, 'NATS_USER');
  const natsPassword = optionalVar(env, 'NATS_PASSWORD');
  if ((natsUser === undefined) !== (natsPassword === undefined)) throw new ConfigError('NATS_USER and NATS_PASSWORD must be set together');
  return natsUser === undefined ? {} : { natsUser, natsPassword };
}

/** Settings of a NATS-only service: the base plus the port of its health endpoint for probes. */
export interface ServiceConfig extends BaseConfig {
  healthPort: number;
  healthHost: string;
  /** How often the service's event consumers try one event before parking it as dead. */
  eventMaxAttempts: number;
}

export function loadServiceConfig(env: Env, defaultHealthPort: number): ServiceConfig {
  return {
    ...loadBaseConfig(env),
    healthPort: intVar(env, 'HEALTH_PORT', defaultHealthPort, { min: 0, max: 65535 }),
    healthHost: stringVar(env, 'HEALTH_HOST', '0.0.0.0'),
    eventMaxAttempts: intVar(env, 'EVENT_MAX_ATTEMPTS', 5, { min: 1, max: 100 }),
  };
}

/** Fewest characters a CURSOR_SECRET may have: `openssl rand -base64 32` gives 44. */
export const CURSOR_SECRET_MIN_LENGTH = 32;

/**
 * The secret derived from a DATABASE_URL. Earlier releases derived it from a URL with a password too;
 * docs/deployment.md ("Cursor secret") shows how to list that one after a new CURSOR_SECRET while clients
 * page on with the cursors it signed.
 */
export function derivedCursorSecret(databaseUrl: string): string {
  return createHash('sha256').update('crm cursor secret\0').update(databaseUrl).digest('base64url');
}

/**
 * The secrets cursors are signed with: CURSOR_SECRET (comma-separated, the current first). Unset, it is
 * required wherever DATABASE_URL carries a password: a secret derived from that URL would change with every
 * rotation of the database password and refuse every cursor clients hold. A URL without a password (one
 * machine, trust or peer authentication) holds nothing secret to lose, and the secret is derived from it, so
 * `npm start` and the tests need no setting.
 */
export function loadCursorSecrets(env: Env, databaseUrl: string): string[] {
  const configured = optionalVar(env, 'CURSOR_SECRET');
  if (configured === undefined) {
    if (new URL(databaseUrl).password !== '') {
      throw new ConfigError(
        'CURSOR_SECRET is required when DATABASE_URL carries a password, so that rotating the password keeps the cursors clients hold (e.g. openssl rand -base64 32)',
      );
    }
    return [derivedCursorSecret(databaseUrl)];
  }
  const secrets = configured.split(',').map((secret) => secret.trim());
  // Not echoed: it is a secret.
  if (secrets.some((secret) => secret.length < CURSOR_SECRET_MIN_LENGTH)) {
    throw new ConfigError(
      `CURSOR_SECRET must be one or more secrets of at least ${CURSOR_SECRET_MIN_LENGTH} characters each, separated by commas (e.g. openssl rand -base64 32)`,
    );
  }
  return secrets;
}

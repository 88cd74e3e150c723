import { boolVar, ConfigError, enumVar, intVar, loadBaseConfig, loadServiceConfig, optionalVar, urlVar } from './config';

describe('configuration from the environment', () => {
  it('treats an empty value as unset', () => {
    expect(intVar({ N: '' }, 'N', 7)).toBe(7);
    expect(optionalVar({ S: '' }, 'S')).toBeUndefined();
    expect(boolVar({ B: '' }, 'B', true)).toBe(true);
    expect(loadBaseConfig({ LOG_LEVEL: '', RPC_TIMEOUT_MS: '' })).toMatchObject({ logLevel: 'info', rpcTimeoutMs: 5000 });
  });

  it('accepts only plain integers within bounds, naming the variable', () => {
    expect(intVar({ N: ' 42 ' }, 'N', 0)).toBe(42);
    for (const bad of ['1e2', '4.5', '0x10', 'ten', '12abc']) {
      expect(() => intVar({ N: bad }, 'N', 0)).toThrow(new ConfigError(`N must be an integer, got '${bad}'`));
    }
    expect(() => intVar({ N: '0' }, 'N', 5, { min: 1 })).toThrow('N must be at least 1, got 0');
    expect(() => intVar({ N: '101' }, 'N', 5, { max: 100 })).toThrow('N must be at most 100, got 101');
  });

  it('leaves the pool size to each process unless DATABASE_POOL_SIZE is set, and bounds it', () => {
    expect(loadBaseConfig({}).databasePoolSize).toBeUndefined();
    expect(loadBaseConfig({ DATABASE_POOL_SIZE: '' }).databasePoolSize).toBeUndefined();
    expect(loadBaseConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize).toBe(4);
    expect(() => loadBaseConfig({ DATABASE_POOL_SIZE: '1' })).toThrow('DATABASE_POOL_SIZE must be at least 2, got 1');
  });

  it('keeps the event stream 7 days with no size limit unless JETSTREAM_MAX_AGE_HOURS and JETSTREAM_MAX_BYTES say otherwise', () => {
    expect(loadBaseConfig({})).toMatchObject({ jetstreamMaxAgeHours: 168, jetstreamMaxBytes: 0 });
    expect(loadBaseConfig({ JETSTREAM_MAX_AGE_HOURS: '24', JETSTREAM_MAX_BYTES: '10737418240' })).toMatchObject({
      jetstreamMaxAgeHours: 24,
      jetstreamMaxBytes: 10 * 2 ** 30,
    });
    expect(() => loadBaseConfig({ JETSTREAM_MAX_AGE_HOURS: '0' })).toThrow('JETSTREAM_MAX_AGE_HOURS must be at least 1, got 0');
    expect(() => loadBaseConfig({ JETSTREAM_MAX_BYTES: '10G' })).toThrow("JETSTREAM_MAX_BYTES must be an integer, got '10G'");
  });

  it('applies migrations at start unless DATABASE_MIGRATIONS=verify, and accepts only a plain role name for DATABASE_APP_ROLE', () => {
    expect(loadBaseConfig({})).toMatchObject({ databaseMigrations: 'run', databaseMigrationsWaitSeconds: 240, databaseAppRole: undefined });
    expect(() => loadBaseConfig({ DATABASE_MIGRATIONS_WAIT_SECONDS: '-1' })).toThrow('DATABASE_MIGRATIONS_WAIT_SECONDS must be at least 0, got -1');
    expect(loadBaseConfig({ DATABASE_MIGRATIONS: 'verify', DATABASE_APP_ROLE: 'crm_app' })).toMatchObject({
      databaseMigrations: 'verify',
      databaseAppRole: 'crm_app',
    });
    expect(() => loadBaseConfig({ DATABASE_MIGRATIONS: 'skip' })).toThrow("DATABASE_MIGRATIONS must be one of run, verify, got 'skip'");
    expect(() => loadBaseConfig({ DATABASE_APP_ROLE: 'app; DROP TABLE x' })).toThrow(/DATABASE_APP_ROLE must be a lowercase PostgreSQL role name/);
    expect(() => loadBaseConfig({ DATABASE_APP_ROLE: 'CrmApp' })).toThrow(/DATABASE_APP_ROLE/);
  });

  it('reads booleans and enumerations strictly', () => {
    expect(boolVar({ B: 'YES' }, 'B', false)).toBe(true);
    expect(boolVar({ B: '0' }, 'B', true)).toBe(false);
    expect(() => boolVar({ B: 'maybe' }, 'B', true)).toThrow("B must be true or false, got 'maybe'");
    expect(enumVar({ E: 'b' }, 'E', 'a', ['a', 'b'] as const)).toBe('b');
    expect(() => enumVar({ E: 'c' }, 'E', 'a', ['a', 'b'] as const)).toThrow("E must be one of a, b, got 'c'");
  });

  it('checks URL schemes and never repeats a URL that may hold a password', () => {
    expect(urlVar({ U: 'postgres://u:p@db:5432/x' }, 'U', 'postgres://x', ['postgres'])).toBe('postgres://u:p@db:5432/x');
    expect(() => urlVar({ U: 'mysql://u:hunter2@db/x' }, 'U', 'postgres://x', ['postgres', 'postgresql'])).toThrow(
      "U must use postgres or postgresql://, got 'mysql://'",
    );
    let error: unknown;
    try {
      urlVar({ U: 'postgres://u:hunter2@db:notaport/x' }, 'U', 'postgres://x', ['postgres']);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe('U is not a valid URL');
  });

  it('takes the NATS user and password together from NATS_USER and NATS_PASSWORD, never from NATS_URL, and never repeats them', () => {
    expect(loadBaseConfig({})).not.toHaveProperty('natsUser');
    expect(loadBaseConfig({ NATS_USER: 'crm-deals', NATS_PASSWORD: 's3cret' })).toMatchObject({ natsUser: 'crm-deals', natsPassword: 's3cret' });
    expect(() => loadBaseConfig({ NATS_USER: 'crm-deals' })).toThrow('NATS_USER and NATS_PASSWORD must be set together');
    expect(() => loadBaseConfig({ NATS_PASSWORD: 's3cret' })).toThrow('NATS_USER and NATS_PASSWORD must be set together');
    const withCredentials = () => loadBaseConfig({ NATS_URL: 'nats://crm-deals:s3cret@nats:4222' });
    expect(withCredentials).toThrow('NATS_URL must not carry a user or password; set NATS_USER and NATS_PASSWORD');
    expect(withCredentials).not.toThrow(/s3cret/);
  });

  it('checks the namespace shape and fills service defaults', () => {
    expect(() => loadBaseConfig({ CRM_NAMESPACE: 'Prod-1' })).toThrow(/CRM_NAMESPACE must be lowercase/);
    expect(loadServiceConfig({}, 3002)).toMatchObject({
      namespace: 'crm',
      healthPort: 3002,
      eventMaxAttempts: 5,
      idempotencyTtlHours: 24,
      natsUrl: 'nats://127.0.0.1:4222',
    });
    expect(() => loadServiceConfig({ HEALTH_PORT: '70000' }, 3002)).toThrow('HEALTH_PORT must be at most 65535, got 70000');
  });
});

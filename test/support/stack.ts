import 'reflect-metadata';
import { DEFAULT_DATABASE_URL, DEFAULT_NATS_URL, DEFAULT_REDIS_URL, Env } from '@crm/common';
import { eventStreamName, internalRequest, RPC_SERVICES, RpcServiceName } from '@crm/contracts';
import { CrmNatsClient } from '@crm/messaging';
import { RunningService } from '@crm/runtime';
import { randomBytes } from 'crypto';
import Redis from 'ioredis';
import { connect } from 'nats';
import { Client } from 'pg';
import { firstValueFrom } from 'rxjs';
import { RunningGateway, startGateway } from '../../apps/gateway/src/gateway.app';
import { ApiClient } from './api-client';
import { createFromTemplate } from './template-database';
import { testRunPrefix } from './test-run';

/** Loaded on demand, so a suite only loads the services it starts. */
const starters: Record<RpcServiceName, (env: Env) => Promise<RunningService>> = {
  contacts: async (env) => (await import('../../apps/contacts/src/contacts.app')).startContacts(env),
  deals: async (env) => (await import('../../apps/deals/src/deals.app')).startDeals(env),
  events: async (env) => (await import('../../apps/events/src/events.app')).startEvents(env),
  webhooks: async (env) => (await import('../../apps/webhooks/src/webhooks.app')).startWebhooks(env),
};

export interface TestStack {
  namespace: string;
  databaseUrl: string;
  env: Env;
  /** The read-write key the stack was started with. */
  apiKey: string;
  gateway: RunningGateway;
  services: Partial<Record<RpcServiceName, RunningService>>;
  api: ApiClient;
  /** Starts one more gateway on the same database, broker and Redis (a second replica). */
  startGateway(extraEnv?: Env): Promise<RunningGateway>;
  startService(name: RpcServiceName, extraEnv?: Env): Promise<RunningService>;
  stopService(name: RpcServiceName): Promise<void>;
  stop(): Promise<void>;
}

export function randomKey(environment: 'live' | 'test' = 'live'): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `crm_${environment}_${Array.from(randomBytes(32), (b) => alphabet[b % 62]).join('')}`;
}

export function testNamespace(): string {
  return `${testRunPrefix()}${randomBytes(5).toString('hex')}`;
}

export function testDatabaseUrl(namespace: string): string {
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/crm_${namespace}`;
  return url.toString();
}

/** The environment a test process would be started with: its own database and NATS/Redis namespace. */
export function testEnv(namespace = testNamespace(), extra: Env = {}): Env {
  return {
    DATABASE_URL: testDatabaseUrl(namespace),
    NATS_URL: process.env.NATS_URL ?? DEFAULT_NATS_URL,
    REDIS_URL: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
    CRM_NAMESPACE: namespace,
    PORT: '0',
    HOST: '127.0.0.1',
    HEALTH_PORT: '0',
    HEALTH_HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Two suites side by side, some with extra replicas, stay well inside PostgreSQL's default 100 connections.
    DATABASE_POOL_SIZE: '4',
    // A fresh key per namespace for the webhooks service's secrets at rest.
    WEBHOOKS_SECRET_KEYS: `test1:${randomBytes(32).toString('base64')}`,
    ...extra,
  };
}

/** Removes everything a test namespace left behind: its database, its stream and its Redis keys. */
export async function dropNamespace(env: Env): Promise<void> {
  const namespace = env.CRM_NAMESPACE!;
  const dbName = new URL(env.DATABASE_URL!).pathname.slice(1);
  // As the suite's own (administrative) user: a stack may run as a role that cannot drop its database.
  const admin = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  admin.pathname = '/postgres';
  const pg = new Client({ connectionString: admin.toString() });
  await pg.connect();
  await pg.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await pg.end();
  const nc = await connect({ servers: env.NATS_URL });
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(eventStreamName(namespace)).catch(() => undefined);
  await nc.close();
  const redis = new Redis(env.REDIS_URL!, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined); // a test may have stopped its own Redis on purpose
  try {
    await redis.connect();
    const keys = await redis.keys(`${namespace}:*`);
    if (keys.length) await redis.del(...keys);
  } catch {
    // nothing to clean
  } finally {
    redis.disconnect();
  }
}

/** Settings that choose the database or how it is migrated: a stack given any starts on an empty database. */
const DATABASE_SETTINGS = ['DATABASE_URL', 'DATABASE_MIGRATIONS', 'DATABASE_APP_ROLE'];

export interface StackOptions {
  env?: Env;
  /** The services to start (all by default); the gateway always starts. */
  services?: readonly RpcServiceName[];
  /**
   * The services create and migrate the database from nothing, as on a first start, instead of starting
   * on a copy of the run's migrated template (see template-database.ts): for tests of migrations.
   */
  emptyDatabase?: boolean;
}

/**
 * Starts the whole system in this process, each part exactly as its main() would, on a database and
 * NATS namespace of its own, so suites can run side by side and beside a running stack.
 */
export async function startStack(options: StackOptions = {}): Promise<TestStack> {
  const namespace = testNamespace();
  const apiKey = randomKey();
  const env = testEnv(namespace, { CRM_BOOTSTRAP_API_KEY: apiKey, ...options.env });
  const services: TestStack['services'] = {};
  const gateways: RunningGateway[] = [];
  const replicas: RunningService[] = [];
  const wanted = options.services ?? RPC_SERVICES;
  const ownDatabase = DATABASE_SETTINGS.some((name) => options.env?.[name] !== undefined);
  if (!options.emptyDatabase && !ownDatabase && process.env.CRM_TEST_RUN) await createFromTemplate(env);
  // The first start creates the database if there is none yet; the rest then race only on their own schemas.
  for (const name of wanted) services[name] = await starters[name](env);
  const gateway = await startGateway(env);
  gateways.push(gateway);

  const stack: TestStack = {
    namespace,
    databaseUrl: env.DATABASE_URL!,
    env,
    apiKey,
    gateway,
    services,
    api: new ApiClient(gateway.url, apiKey),
    async startGateway(extraEnv = {}) {
      const another = await startGateway({ ...env, ...extraEnv });
      gateways.push(another);
      return another;
    },
    async startService(name, extraEnv = {}) {
      const service = await starters[name]({ ...env, ...extraEnv });
      // A second replica of a running service is kept too, so stop() closes every one.
      if (services[name]) replicas.push(services[name]!);
      services[name] = service;
      return service;
    },
    async stopService(name) {
      await services[name]?.close();
      delete services[name];
    },
    async stop() {
      await Promise.all(gateways.map((g) => g.close()));
      await Promise.all([...Object.values(services), ...replicas].map((s) => s!.close()));
      await dropNamespace(env);
    },
  };
  return stack;
}

/**
 * Sends one service-to-service request the way the services do (a ClientProxy over NATS), for tests of
 * internal operations that have no HTTP route. Resolves with the reply, rejects with the DomainError.
 */
export async function askService<T>(stack: TestStack, pattern: string, body: unknown): Promise<T> {
  const client = new CrmNatsClient({ servers: stack.env.NATS_URL!, name: 'crm-test', namespace: stack.namespace, timeoutMs: 5000 });
  try {
    return await firstValueFrom(client.send<T>(pattern, internalRequest({ request_id: 'test' }, body)), { defaultValue: undefined as T });
  } finally {
    await client.close();
  }
}

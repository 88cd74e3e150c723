import { randomUUID } from 'crypto';
import { ApiClient } from './api-client';
import {
  freePort,
  NatsServer,
  PostgresServer,
  RedisServer,
  ServiceProcess,
  spawnService,
  startNatsServer,
  startPostgresServer,
  startRedisServer,
} from './processes';
import { randomKey, testEnv } from './stack';

export const STACK_PROCESSES = ['contacts', 'deals', 'events', 'webhooks', 'gateway'] as const;
export type StackProcess = (typeof STACK_PROCESSES)[number];

/**
 * The whole system as separate OS processes on private PostgreSQL, NATS and Redis servers, so a fault test
 * may kill, restart or take down any of them without touching the shared ones.
 */
export interface FaultStack {
  pg: PostgresServer;
  nats: NatsServer;
  redis: RedisServer;
  env: ReturnType<typeof testEnv>;
  api: ApiClient;
  processes: Record<StackProcess, ServiceProcess>;
  /** Starts (or restarts) one process; the gateway comes back on the port clients know. */
  start(name: StackProcess): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `namespace` and `nats` let a test prepare the broker for the namespace (its users, say); `envOf` adds
 * settings of one process only (its own NATS user).
 */
export interface FaultStackOptions {
  namespace?: string;
  nats?: NatsServer;
  envOf?: (name: StackProcess) => Record<string, string>;
}

export async function startFaultStack(extraEnv: Record<string, string> = {}, options: FaultStackOptions = {}): Promise<FaultStack> {
  const [pg, nats, redis] = await Promise.all([startPostgresServer(), options.nats ?? startNatsServer(), startRedisServer()]);
  const namespace = options.namespace ?? faultNamespace();
  const apiKey = randomKey();
  const gatewayPort = await freePort();
  const env = testEnv(namespace, {
    DATABASE_URL: pg.url(`crm_${namespace}`),
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    CRM_BOOTSTRAP_API_KEY: apiKey,
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_BURST: '1000000',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  });
  const processes = {} as Record<StackProcess, ServiceProcess>;
  const stack: FaultStack = {
    pg,
    nats,
    redis,
    env,
    api: new ApiClient(`http://127.0.0.1:${gatewayPort}`, apiKey),
    processes,
    async start(name) {
      processes[name] = await spawnService(name, { ...env, ...options.envOf?.(name) }, name === 'gateway' ? { port: gatewayPort } : {});
    },
    async stop() {
      await Promise.all(Object.values(processes).map((p) => p.stop()));
      await Promise.all([pg.destroy(), nats.destroy(), redis.stop()]);
    },
  };
  // The first process creates the database; the others then only add their schemas.
  for (const name of STACK_PROCESSES) await stack.start(name);
  return stack;
}

export function faultNamespace(): string {
  return `f${randomUUID().replace(/-/g, '').slice(0, 11)}`;
}

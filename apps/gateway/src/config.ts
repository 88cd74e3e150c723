import { BaseConfig, ConfigError, DEFAULT_REDIS_URL, enumVar, Env, intVar, loadBaseConfig, optionalVar, stringVar, urlVar } from '@crm/common';

export interface GatewayConfig extends BaseConfig {
  port: number;
  host: string;
  redisUrl: string;
  /** Sustained rate per API key (token bucket refill), requests per minute. */
  rateLimitPerMinute: number;
  /** Bucket capacity: how many requests a key may send at once after a quiet period. */
  rateLimitBurst: number;
  keyEnvironment: 'live' | 'test';
  bootstrapApiKey?: string;
  /** Express `trust proxy` setting, so client addresses behind a load balancer are right. */
  trustProxy: string;
  /** How long the health check waits for each service. */
  healthTimeoutMs: number;
}

export const BOOTSTRAP_KEY_SHAPE = /^crm_(live|test)_[A-Za-z0-9]{32,128}$/;

export function loadGatewayConfig(env: Env): GatewayConfig {
  const config: GatewayConfig = {
    ...loadBaseConfig(env),
    port: intVar(env, 'PORT', 3000, { min: 0, max: 65535 }),
    host: stringVar(env, 'HOST', '0.0.0.0'),
    redisUrl: urlVar(env, 'REDIS_URL', DEFAULT_REDIS_URL, ['redis', 'rediss']),
    rateLimitPerMinute: intVar(env, 'RATE_LIMIT_PER_MINUTE', 1000, { min: 1, max: 1_000_000 }),
    rateLimitBurst: intVar(env, 'RATE_LIMIT_BURST', 1000, { min: 1, max: 1_000_000 }),
    keyEnvironment: enumVar(env, 'CRM_KEY_ENV', 'live', ['live', 'test'] as const),
    bootstrapApiKey: optionalVar(env, 'CRM_BOOTSTRAP_API_KEY'),
    trustProxy: stringVar(env, 'TRUST_PROXY', 'loopback'),
    healthTimeoutMs: intVar(env, 'HEALTH_TIMEOUT_MS', 1000, { min: 50, max: 30000 }),
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

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

import { Logger, StartupError } from '@crm/common';
import Redis from 'ioredis';

/**
 * Commands fail fast instead of queueing while Redis is away, so the rate limiter can fail open at
 * once rather than hold requests. Commands issued in the same turn of the event loop (the rate-limit
 * steps of requests that arrived together) go out in one write: a socket write costs more than the
 * command itself, and each step stays its own atomic script.
 */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 500,
    connectTimeout: 3000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    enableAutoPipelining: true,
  });
  let lastLog = 0;
  redis.on('error', (err: Error) => {
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      logger.warn({ err: err.message }, 'Redis connection error');
    }
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new StartupError(`Redis at ${url} is unreachable: ${(err as Error).message}`);
  }
  return redis;
}

import { Logger } from '@crm/common';
import { healthCheck, RPC_SERVICES, RpcServiceName } from '@crm/contracts';
import { NATS_CONNECTION, RpcCaller } from '@crm/messaging';
import { DependencyHealth, withTimeout } from '@crm/runtime';
import { HttpException, Inject, Injectable } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorFunction, HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import Redis from 'ioredis';
import { NatsConnection } from 'nats';
import { TimeoutError } from 'rxjs';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { REDIS } from '../rate-limit/rate-limiter.service';
import { LOGGER } from '../tokens';

/** A probe's answer: 200 when what it checks is up, 503 with the same body shape when not. */
export interface HealthAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * The gateway's probes and status, served on its health port (HEALTH_PORT), never on the API port:
 * - `live`: the process answers; nothing else is checked, so no outage restarts gateways.
 * - `ready`: what this gateway needs to serve at all, its database and NATS. Redis is reported but does
 *   not count: the rate limiter fails open without it. A service being down does not count either: the
 *   gateway still serves the other services' routes.
 * - `full`: every dependency and every service; 200 only when all are up. The outbox backlogs (the
 *   gateway's own, and each service's as one of its replicas reads it) are reported and never count:
 *   lag is not an outage. Each call touches PostgreSQL, Redis, NATS and the four services.
 */
@Injectable()
export class GatewayHealth {
  constructor(
    private readonly health: HealthCheckService,
    private readonly dependencies: DependencyHealth,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
    private readonly rpc: RpcCaller,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  live(): HealthAnswer {
    return { status: 200, body: { status: 'ok' } };
  }

  async ready(): Promise<HealthAnswer> {
    const timeout = this.config.healthTimeoutMs;
    const redis = await this.redisUp(timeout);
    // Redis is listed in `details` with its real state but left out of the verdict.
    return this.check([() => this.dependencies.database(this.dataSource, timeout), () => this.dependencies.nats(this.nc, timeout)], redis);
  }

  full(): Promise<HealthAnswer> {
    const timeout = this.config.healthTimeoutMs;
    return this.check([
      () => this.dependencies.database(this.dataSource, timeout),
      () => this.redisUp(timeout),
      () => this.dependencies.nats(this.nc, timeout),
      () => this.dependencies.outbox(this.dataSource, timeout),
      ...RPC_SERVICES.map((service) => () => this.serviceUp(service, timeout)),
    ]);
  }

  private async check(checks: HealthIndicatorFunction[], reportOnly?: HealthIndicatorResult): Promise<HealthAnswer> {
    try {
      const result = await this.health.check(checks);
      return { status: 200, body: { ...result, details: { ...result.details, ...reportOnly } } };
    } catch (err) {
      if (err instanceof HttpException) {
        const body = err.getResponse() as { details?: HealthIndicatorResult };
        return { status: err.getStatus(), body: { ...body, details: { ...body.details, ...reportOnly } } };
      }
      this.logger.error({ err }, 'health check failed');
      return { status: 503, body: { status: 'error' } };
    }
  }

  private async redisUp(timeout: number) {
    const check = this.indicators.check('redis');
    try {
      await withTimeout(this.redis.ping(), timeout, 'Redis');
      return check.up();
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
  }

  private async serviceUp(service: RpcServiceName, timeout: number) {
    const check = this.indicators.check(service);
    try {
      const answer = await this.rpc.call(healthCheck(service), { request_id: 'health' }, {}, { timeoutMs: timeout });
      return check.up(answer.outbox && { outbox: answer.outbox });
    } catch (err) {
      const message = err instanceof TimeoutError ? `did not answer within ${timeout} ms` : (err as Error).message;
      return check.down({ message });
    }
  }
}

import { Logger } from '@crm/common';
import { healthCheck, RPC_SERVICES, RpcServiceName } from '@crm/contracts';
import { NATS_CONNECTION, RpcCaller } from '@crm/messaging';
import { DependencyHealth, withTimeout } from '@crm/runtime';
import { Controller, Get, HttpException, Inject, Res } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorFunction, HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { NatsConnection } from 'nats';
import { TimeoutError } from 'rxjs';
import { DataSource } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { REDIS } from '../rate-limit/rate-limiter.service';
import { LOGGER } from '../tokens';
import { Scopes } from '../http/scopes';
import { ApiHealth } from '../openapi/api-docs.decorators';

/**
 * Probes and status, open without a key:
 * - `GET /health/live`: the process answers; nothing else is checked, so no outage restarts gateways.
 * - `GET /health/ready`: what this gateway needs to serve at all, its database and NATS. Redis is
 *   reported but does not count: the rate limiter fails open without it. A service being down does not
 *   count either: the gateway still serves the other services' routes.
 * - `GET /health`: every dependency and every service; 200 only when all are up, 503 otherwise, with
 *   the same body shape either way. The outbox backlogs (the gateway's own, and each service's as one of
 *   its replicas reads it) are reported and never count: lag is not an outage.
 */
@Controller('health')
export class HealthController {
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

  @Get('live')
  @Scopes('public')
  @ApiHealth('Liveness: the process answers')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  @Scopes('public')
  @ApiHealth('Readiness: the database and NATS answer (Redis reported, not required)')
  async ready(@Res() res: FastifyReply): Promise<void> {
    const timeout = this.config.healthTimeoutMs;
    const redis = await this.redisUp(timeout);
    // Redis is listed in `details` with its real state but left out of the verdict.
    await this.respond(res, [() => this.dependencies.database(this.dataSource, timeout), () => this.dependencies.nats(this.nc, timeout)], redis);
  }

  @Get()
  @Scopes('public')
  @ApiHealth('Every dependency and service')
  async check(@Res() res: FastifyReply): Promise<void> {
    const timeout = this.config.healthTimeoutMs;
    await this.respond(res, [
      () => this.dependencies.database(this.dataSource, timeout),
      () => this.redisUp(timeout),
      () => this.dependencies.nats(this.nc, timeout),
      () => this.dependencies.outbox(this.dataSource, timeout),
      ...RPC_SERVICES.map((service) => () => this.serviceUp(service, timeout)),
    ]);
  }

  private async respond(res: FastifyReply, checks: HealthIndicatorFunction[], reportOnly?: HealthIndicatorResult): Promise<void> {
    try {
      const result = await this.health.check(checks);
      res.status(200).send({ ...result, details: { ...result.details, ...reportOnly } });
    } catch (err) {
      if (err instanceof HttpException) {
        const body = err.getResponse() as { details?: HealthIndicatorResult };
        res.status(err.getStatus()).send({ ...body, details: { ...body.details, ...reportOnly } });
        return;
      }
      this.logger.error({ err }, 'health check failed');
      res.status(503).send({ status: 'error' });
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

import { DatabaseSpec, dataSourceOptions, Logger } from '@crm/common';
import { ServiceName } from '@crm/contracts';
import { MessagingModule, RpcClientsModule } from '@crm/messaging';
import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import Redis from 'ioredis';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { ApiKeysModule } from './apikeys/api-keys.module';
import { GATEWAY_CONFIG, GatewayConfig } from './config';
import { HealthModule } from './health/health.module';
import { AccessMiddleware } from './http/access.middleware';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { jsonBody } from './http/json-body';
import { requestLogParams } from './http/request-log';
import { RouteIndex } from './http/route-index';
import { ScopesGuard } from './http/scopes';
import { TracingMiddleware } from './http/tracing.middleware';
import { IdempotencyMiddleware } from './idempotency/idempotency.middleware';
import { ImportsModule } from './imports/imports.module';
import { McpModule } from './mcp/mcp.module';
import { MetricsModule } from './metrics/metrics.module';
import { RequestMetricsMiddleware } from './metrics/request-metrics.middleware';
import { ApiDocsModule } from './openapi/api-docs.module';
import { BatchCostMiddleware } from './rate-limit/batch-cost.middleware';
import { RateLimiterService, REDIS } from './rate-limit/rate-limiter.service';
import { ResourcesModule } from './routes/resources.module';
import { LOGGER } from './tokens';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  database: DatabaseSpec;
  dataSource: DataSource;
  nc: NatsConnection;
  redis: Redis;
}

/**
 * The gateway's settings and connections, which every feature module shares as the services' root modules
 * share theirs. A module of its own rather than the root made global: Nest runs a global module's
 * middleware first, and the request log must run before the key check.
 */
@Module({})
class GatewaySettingsModule {}

@Module({})
export class GatewayModule implements NestModule {
  /**
   * Every request, matched or not, in this order after the request log (LoggerModule's middleware runs
   * first): its trace span, timing, key check and rate limit, body parsing and input limits, the rest of a batch's cost, Idempotency-Key. Routes,
   * the scopes guard and the exception filter come after.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(TracingMiddleware, RequestMetricsMiddleware, AccessMiddleware, jsonBody(), BatchCostMiddleware, IdempotencyMiddleware)
      .forRoutes({ path: '{*splat}', method: RequestMethod.ALL });
  }

  /** The HTTP pipeline (middleware, the scopes guard, the error filter); the feature modules hold the routes. */
  static register(deps: GatewayDeps): DynamicModule {
    const { config, logger, database, dataSource, nc, redis } = deps;
    return {
      module: GatewayModule,
      imports: [
        {
          module: GatewaySettingsModule,
          global: true,
          providers: [
            { provide: GATEWAY_CONFIG, useValue: config },
            { provide: LOGGER, useValue: logger },
            { provide: REDIS, useValue: redis },
          ],
          exports: [GATEWAY_CONFIG, LOGGER, REDIS],
        },
        LoggerModule.forRoot(requestLogParams(logger)),
        DiscoveryModule,
        TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(database), dataSourceFactory: async () => dataSource }),
        MessagingModule.forRoot({
          nc,
          service: ServiceName.Gateway,
          namespace: config.namespace,
          logger,
          databaseUrl: config.databaseUrl,
          schema: database.schema,
          streamReplicas: config.jetstreamReplicas,
        }),
        RpcClientsModule.forRoot({ servers: config.natsUrl, name: 'crm-gateway-client', namespace: config.namespace, timeoutMs: config.rpcTimeoutMs }),
        HealthModule,
        MetricsModule,
        ApiKeysModule,
        ResourcesModule,
        ImportsModule,
        McpModule,
        ApiDocsModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_GUARD, useClass: ScopesGuard },
        RateLimiterService,
        RouteIndex,
      ],
    };
  }
}

import { CursorCodec, DatabaseSpec, dataSourceOptions, Logger } from '@crm/common';
import { ServiceName } from '@crm/contracts';
import { MessagingModule, natsUser, RpcClientsModule } from '@crm/messaging';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import Redis from 'ioredis';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { ApiKeysModule } from './apikeys/api-keys.module';
import { AuthModule } from './auth/auth.module';
import { GATEWAY_CONFIG, GatewayConfig } from './config';
import { HealthModule } from './health/health.module';
import { AccessHook } from './http/access.hook';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { requestLogParams } from './http/request-log';
import { RouteIndex } from './http/route-index';
import { ScopesGuard } from './http/scopes';
import { TracingHook } from './http/tracing.hook';
import { IdempotencyHook } from './idempotency/idempotency.hook';
import { IdempotencyErasure } from './idempotency/idempotency-erasure';
import { ExportFilesController } from './exports/export-files.controller';
import { ImportsModule } from './imports/imports.module';
import { McpModule } from './mcp/mcp.module';
import { MetricsModule } from './metrics/metrics.module';
import { RequestMetricsHook } from './metrics/request-metrics.hook';
import { ApiDocsModule } from './openapi/api-docs.module';
import { BatchCostHook } from './rate-limit/batch-cost.hook';
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
 * share theirs.
 */
@Module({})
class GatewaySettingsModule {}

@Module({})
export class GatewayModule {
  /** The HTTP pipeline (its hooks, see installPipeline; the scopes guard; the error filter); the feature modules hold the routes. */
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
            { provide: CursorCodec, useValue: new CursorCodec(config.cursorSecrets) },
          ],
          exports: [GATEWAY_CONFIG, LOGGER, REDIS, CursorCodec],
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
          natsUrl: config.natsUrl,
          natsUser: natsUser(config),
          schema: database.schema,
          streamReplicas: config.jetstreamReplicas,
          streamMaxAgeSeconds: config.jetstreamMaxAgeHours * 3600,
          streamMaxBytes: config.jetstreamMaxBytes,
        }),
        RpcClientsModule.forRoot({
          ...natsUser(config),
          servers: config.natsUrl,
          name: 'crm-gateway-client',
          namespace: config.namespace,
          timeoutMs: config.rpcTimeoutMs,
        }),
        HealthModule,
        MetricsModule,
        ApiKeysModule,
        AuthModule,
        ResourcesModule,
        ImportsModule,
        McpModule,
        ApiDocsModule,
      ],
      // GET /exports/:id/files/:name spends from the rate limit as it streams, so it sits beside the limiter.
      controllers: [ExportFilesController],
      providers: [
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_GUARD, useClass: ScopesGuard },
        RateLimiterService,
        RouteIndex,
        TracingHook,
        AccessHook,
        BatchCostHook,
        IdempotencyHook,
        IdempotencyErasure,
        RequestMetricsHook,
      ],
    };
  }
}

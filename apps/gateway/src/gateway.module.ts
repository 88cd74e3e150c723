import { TracingMiddleware } from './http/tracing.middleware';
import { OpenApiController, OpenApiDocument } from './openapi/openapi.controller';
import { DatabaseSpec, dataSourceOptions, Logger } from '@crm/common';
import { ServiceName } from '@crm/contracts';
import { crmRpcClients, MessagingModule } from '@crm/messaging';
import { DependencyHealth } from '@crm/runtime';
import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import Redis from 'ioredis';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { ApiKeysController } from './apikeys/api-keys.controller';
import { KeyRevocations } from './apikeys/key-revocations';
import { ApiKeyVerifier } from './apikeys/api-key.verifier';
import { ApiKeysService } from './apikeys/api-keys.service';
import { TeamDirectory } from './apikeys/team-directory';
import { GATEWAY_CONFIG, GatewayConfig } from './config';
import { HealthController } from './health/health.controller';
import { AccessMiddleware } from './http/access.middleware';
import { ApiExceptionFilter } from './http/api-exception.filter';
import { jsonBody } from './http/json-body';
import { requestLogParams } from './http/request-log';
import { RouteIndex } from './http/route-index';
import { ScopesGuard } from './http/scopes';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { MetricsController } from './metrics/metrics.controller';
import { RequestMetricsMiddleware } from './metrics/request-metrics.middleware';
import { RateLimiterService, REDIS } from './rate-limit/rate-limiter.service';
import { ActivitiesController } from './routes/activities.controller';
import { CaptureController } from './routes/capture.controller';
import { CompaniesController } from './routes/companies.controller';
import { UsersController } from './routes/users.controller';
import { ImportsController } from './routes/imports.controller';
import { ContactsController } from './routes/contacts.controller';
import { DealsController } from './routes/deals.controller';
import { EventsController } from './routes/events.controller';
import { ObjectsController } from './routes/objects.controller';
import { PipelinesController } from './routes/pipelines.controller';
import { SchemaController } from './routes/schema.controller';
import { TasksController } from './routes/tasks.controller';
import { ServiceForwarder } from './routes/service-forwarder';
import { WebhooksController } from './routes/webhooks.controller';
import { IdempotencyMiddleware } from './idempotency/idempotency.middleware';
import { McpController } from './mcp/mcp.controller';
import { McpService } from './mcp/mcp.service';
import { LOGGER } from './tokens';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  database: DatabaseSpec;
  dataSource: DataSource;
  nc: NatsConnection;
  redis: Redis;
}

@Module({})
export class GatewayModule implements NestModule {
  /**
   * Every request, matched or not, in this order after the request log (LoggerModule's middleware runs
   * first): its trace span, timing, key check and rate limit, body parsing and input limits, Idempotency-Key. Routes,
   * the scopes guard and the exception filter come after.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(TracingMiddleware, RequestMetricsMiddleware, AccessMiddleware, jsonBody(), IdempotencyMiddleware)
      .forRoutes({ path: '{*splat}', method: RequestMethod.ALL });
  }

  static register(deps: GatewayDeps): DynamicModule {
    const { config, logger, database, dataSource, nc, redis } = deps;
    return {
      module: GatewayModule,
      imports: [
        LoggerModule.forRoot(requestLogParams(logger)),
        DiscoveryModule,
        TerminusModule,
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
        crmRpcClients({ servers: config.natsUrl, name: 'crm-gateway-client', namespace: config.namespace, timeoutMs: config.rpcTimeoutMs }),
      ],
      controllers: [
        HealthController,
        MetricsController,
        ApiKeysController,
        ContactsController,
        CompaniesController,
        UsersController,
        ImportsController,
        ActivitiesController,
        TasksController,
        DealsController,
        PipelinesController,
        EventsController,
        WebhooksController,
        SchemaController,
        CaptureController,
        ObjectsController,
        McpController,
        OpenApiController,
      ],
      providers: [
        { provide: GATEWAY_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: REDIS, useValue: redis },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_GUARD, useClass: ScopesGuard },
        ApiKeysService,
        TeamDirectory,
        ApiKeyVerifier,
        KeyRevocations,
        RateLimiterService,
        GatewayMetrics,
        AccessMiddleware,
        IdempotencyMiddleware,
        RequestMetricsMiddleware,
        TracingMiddleware,
        RouteIndex,
        ServiceForwarder,
        McpService,
        OpenApiDocument,
        DependencyHealth,
      ],
    };
  }
}

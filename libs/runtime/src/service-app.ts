import {
  BaseConfig,
  createLogger,
  CursorCodec,
  DatabaseSpec,
  dataSourceOptions,
  loadBaseConfig,
  loadServiceConfig,
  Logger,
  migrateDatabase,
  openDatabase,
  ServiceConfig,
  RetentionSettings,
  TableRetention,
} from '@crm/common';
import { RpcServiceName, VERSIONED_RECORDS } from '@crm/contracts';
import {
  connectNats,
  natsUser,
  CRM_RPC,
  DeadEvents,
  CrmNatsClient,
  RpcClientsModule,
  CrmNatsServer,
  MessagingMetrics,
  MessagingModule,
  NATS_CONNECTION,
  RpcErrorFilter,
} from '@crm/messaging';
import { Controller, DynamicModule, Get, Header, Inject, INestApplication, Module, ModuleMetadata, RequestMethod } from '@nestjs/common';
import { APP_INTERCEPTOR, NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NatsConnection } from 'nats';
import { LoggerModule, Logger as NestLogger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { DependencyHealth } from './health.indicators';
import { RequestOutcomes } from './request-outcome.step';
import { ChangeOrigin } from './change-origin.step';
import { RequestDeadline } from './request-deadline.step';
import { RpcMetrics } from './rpc-metrics.step';
import { RpcTracing } from './rpc-tracing.step';
import { ServiceRequestInterceptor } from './service-request.interceptor';
import { rpcHealthController } from './rpc-health.controller';
import { RetentionJob } from './retention.job';

export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
export const LOGGER = Symbol('LOGGER');

/** What makes one NATS service: its name, its database, its feature modules. Each app declares one in `<app>.app.ts`. */
export interface ServiceDefinition {
  service: RpcServiceName;
  defaultHealthPort: number;
  database: Omit<DatabaseSpec, 'url' | 'schema'>;
  /** The feature modules of the service; their controllers' @MessagePattern methods answer requests. */
  imports: ModuleMetadata['imports'];
  /**
   * What becomes of each table of its schema over time, and how its RetentionJob, which deletes from the
   * tables declared `sweptBy: 'retention-job'`, runs.
   */
  retention?: { tables: TableRetention[]; settings: (env: Record<string, string | undefined>) => RetentionSettings };
  /** Extra settings read from the environment, provided under the returned token. */
  settings?: { token: symbol | string; load: (env: Record<string, string | undefined>) => unknown };
}

export interface RunningService {
  app: INestApplication;
  config: ServiceConfig;
  dataSource: DataSource;
  nc: NatsConnection;
  logger: Logger;
  /** Where the health endpoint listens. */
  healthUrl: string;
  close(): Promise<void>;
}

/**
 * Probes of a service, on HEALTH_PORT. `/health/live` answers from the process alone, so a database or
 * broker outage never makes Kubernetes restart every pod at once; `/health/ready` (also plain `/health`)
 * checks the database, NATS and the parked-event count, to gate start-up and report state, and reports the
 * outbox backlog.
 */
@Controller('health')
class ServiceHealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly dependencies: DependencyHealth,
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly deadEvents: DeadEvents,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get(['', 'ready'])
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.dependencies.database(this.dataSource),
      () => this.dependencies.nats(this.nc),
      () => this.dependencies.deadEvents(this.deadEvents),
      () => this.dependencies.outbox(this.dataSource),
    ]);
  }
}

/** Prometheus metrics of the process, on the health port. */
@Controller('metrics')
class ServiceMetricsController {
  constructor(private readonly metrics: MessagingMetrics) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4')
  render(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}

@Module({})
class ServiceRootModule {}

function serviceDatabase(definition: ServiceDefinition, config: BaseConfig): DatabaseSpec {
  return {
    ...definition.database,
    url: config.databaseUrl,
    schema: definition.service,
    poolSize: config.databasePoolSize ?? definition.database.poolSize,
    migrationsMode: config.databaseMigrations,
    verifyWaitMs: config.databaseMigrationsWaitSeconds * 1000,
    appRole: config.databaseAppRole,
  };
}

/**
 * `main.js migrate`: applies the service's pending migrations and grants DATABASE_APP_ROLE read and write on
 * its tables, then exits. Run as a role that may create (a Kubernetes Job) before pods that only verify.
 */
export async function migrateService(definition: ServiceDefinition, env: Record<string, string | undefined> = process.env): Promise<string[]> {
  const config = loadBaseConfig(env);
  return migrateDatabase({ ...serviceDatabase(definition, config), poolSize: 2 });
}

/**
 * Starts one NATS service as a NestJS hybrid application: validates configuration, prepares its database
 * schema and migrations, connects to NATS, answers requests through @nestjs/microservices (CrmNatsServer),
 * relays its outbox to JetStream, and serves GET /health on HEALTH_PORT.
 */
export async function startService(definition: ServiceDefinition, env: Record<string, string | undefined> = process.env): Promise<RunningService> {
  const config = loadServiceConfig(env, definition.defaultHealthPort);
  const settings = definition.settings ? definition.settings.load(env) : undefined;
  const logger = createLogger(definition.service, config.logLevel);
  const spec = serviceDatabase(definition, config);
  const dataSource = await openDatabase(spec);
  let nc: NatsConnection;
  try {
    nc = await connectNats(config.natsUrl, `crm-${definition.service}`, natsUser(config));
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }

  const root: DynamicModule = {
    module: ServiceRootModule,
    imports: [
      // Nest's own log lines go to the service's logger; probes of /health are not logged.
      LoggerModule.forRoot({ pinoHttp: { logger, autoLogging: false }, forRoutes: [{ path: '{*splat}', method: RequestMethod.ALL }] }),
      TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(spec), dataSourceFactory: async () => dataSource }),
      MessagingModule.forRoot({
        nc,
        service: definition.service,
        namespace: config.namespace,
        logger,
        databaseUrl: config.databaseUrl,
        natsUrl: config.natsUrl,
        natsUser: natsUser(config),
        schema: definition.service,
        streamReplicas: config.jetstreamReplicas,
        streamMaxAgeSeconds: config.jetstreamMaxAgeHours * 3600,
        streamMaxBytes: config.jetstreamMaxBytes,
        eventRetry: { maxAttempts: config.eventMaxAttempts },
        recordVersions: VERSIONED_RECORDS[definition.service] ?? [],
      }),
      RpcClientsModule.forRoot({
        ...natsUser(config),
        servers: config.natsUrl,
        name: `crm-${definition.service}-client`,
        namespace: config.namespace,
        timeoutMs: config.rpcTimeoutMs,
      }),
      TerminusModule,
      ...(definition.imports ?? []),
    ],
    controllers: [ServiceHealthController, ServiceMetricsController, rpcHealthController(definition.service)],
    providers: [
      DependencyHealth,
      // A provider of its own, so its purge starts and stops with the module.
      { provide: RequestOutcomes, useFactory: (ds: DataSource) => new RequestOutcomes(ds, config, logger), inject: [DataSource] },
      {
        provide: APP_INTERCEPTOR,
        useFactory: (metrics: MessagingMetrics, outcomes: RequestOutcomes) =>
          new ServiceRequestInterceptor(config.namespace, [
            new RequestDeadline(config.rpcTimeoutMs),
            new RpcTracing(definition.service),
            new RpcMetrics(metrics),
            outcomes,
            new ChangeOrigin(),
          ]),
        inject: [MessagingMetrics, RequestOutcomes],
      },
      ...(definition.retention
        ? [
            {
              provide: RetentionJob,
              useFactory: (ds: DataSource) =>
                new RetentionJob(ds, definition.service, definition.retention!.tables, definition.retention!.settings(env), logger),
              inject: [DataSource],
            },
          ]
        : []),
      { provide: SERVICE_CONFIG, useValue: config },
      { provide: LOGGER, useValue: logger },
      { provide: CursorCodec, useValue: new CursorCodec(config.cursorSecrets) },
      ...(definition.settings ? [{ provide: definition.settings.token, useValue: settings }] : []),
    ],
    exports: [SERVICE_CONFIG, LOGGER, CursorCodec, ...(definition.settings ? [definition.settings.token] : [])],
    global: true,
  };

  const app = await NestFactory.create(root, { bufferLogs: true, abortOnError: false });
  app.useLogger(app.get(NestLogger));
  const rpcServer = new CrmNatsServer({ ...natsUser(config), servers: config.natsUrl, namespace: config.namespace, service: definition.service, logger });
  // Registered before the microservice connects, which builds its handlers at once and inherits this config.
  app.useGlobalFilters(new RpcErrorFilter(logger, app.getHttpAdapter()));
  app.connectMicroservice({ strategy: rpcServer }, { inheritAppConfig: true });
  try {
    await app.get<CrmNatsClient>(CRM_RPC).connect();
    await app.startAllMicroservices();
    await app.listen(config.healthPort, config.healthHost);
  } catch (err) {
    await app.close().catch(() => undefined);
    await nc.close().catch(() => undefined);
    if (dataSource.isInitialized) await dataSource.destroy();
    throw err;
  }
  const address = app.getHttpServer().address() as { port: number };
  const healthUrl = `http://127.0.0.1:${address.port}/health`;
  logger.info({ healthUrl, namespace: config.namespace }, `${definition.service} service ready`);

  let closed = false;
  return {
    app,
    config,
    dataSource,
    nc,
    logger,
    healthUrl,
    async close() {
      if (closed) return;
      closed = true;
      // Stop taking requests and let the ones in flight answer while the database is still open; Nest
      // would otherwise close the microservice only after the shutdown hooks have closed TypeORM.
      await rpcServer.drain();
      await app.close();
      await nc.drain().catch(() => undefined);
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

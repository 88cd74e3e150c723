import { createLogger, DatabaseSpec, dataSourceOptions, loadServiceConfig, Logger, NestPinoLogger, openDatabase, ServiceConfig } from '@crm/common';
import { RpcServiceName } from '@crm/contracts';
import { connectNats, MessagingModule, NATS_CONNECTION } from '@crm/messaging';
import { Controller, DynamicModule, Get, Inject, INestApplication, Module, ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { DependencyHealth } from './health.indicators';

export const SERVICE_CONFIG = Symbol('SERVICE_CONFIG');
export const LOGGER = Symbol('LOGGER');

export interface ServiceDefinition {
  service: RpcServiceName;
  defaultHealthPort: number;
  database: Omit<DatabaseSpec, 'url' | 'schema'>;
  /** The feature modules of the service. */
  imports: ModuleMetadata['imports'];
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

@Controller('health')
class ServiceHealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly dependencies: DependencyHealth,
    private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.dependencies.database(this.dataSource), () => this.dependencies.nats(this.nc)]);
  }
}

@Module({})
class ServiceRootModule {}

/**
 * Starts one NATS service: validates configuration, prepares its database schema and migrations,
 * connects to NATS, starts answering requests and relaying its outbox, and serves GET /health on
 * HEALTH_PORT for readiness and liveness probes.
 */
export async function startService(definition: ServiceDefinition, env: Record<string, string | undefined> = process.env): Promise<RunningService> {
  const config = loadServiceConfig(env, definition.defaultHealthPort);
  const settings = definition.settings ? definition.settings.load(env) : undefined;
  const logger = createLogger(definition.service, config.logLevel);
  const spec: DatabaseSpec = { ...definition.database, url: config.databaseUrl, schema: definition.service };
  const dataSource = await openDatabase(spec);
  let nc: NatsConnection;
  try {
    nc = await connectNats(config.natsUrl, `crm-${definition.service}`);
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }

  const root: DynamicModule = {
    module: ServiceRootModule,
    imports: [
      TypeOrmModule.forRootAsync({ useFactory: () => dataSourceOptions(spec), dataSourceFactory: async () => dataSource }),
      MessagingModule.forRoot({
        nc,
        serveRpc: true,
        service: definition.service,
        namespace: config.namespace,
        rpcTimeoutMs: config.rpcTimeoutMs,
        logger,
        databaseUrl: config.databaseUrl,
        schema: definition.service,
      }),
      TerminusModule,
      ...(definition.imports ?? []),
    ],
    controllers: [ServiceHealthController],
    providers: [
      DependencyHealth,
      { provide: SERVICE_CONFIG, useValue: config },
      { provide: LOGGER, useValue: logger },
      ...(definition.settings ? [{ provide: definition.settings.token, useValue: settings }] : []),
    ],
    exports: [SERVICE_CONFIG, LOGGER, ...(definition.settings ? [definition.settings.token] : [])],
    global: true,
  };

  const app = await NestFactory.create(root, { logger: new NestPinoLogger(logger), abortOnError: false });
  await app.listen(config.healthPort, config.healthHost);
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
      await app.close();
      await nc.drain().catch(() => undefined);
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

import { createLogger, DatabaseSpec, Env, loadBaseConfig, Logger, migrateDatabase, openDatabase, StartupError } from '@crm/common';
export { gatewayTables } from './database/tables';
import { BatchLimits, ImportLimits } from '@crm/contracts';
import { connectNats, CRM_RPC, CrmNatsClient, natsUser } from '@crm/messaging';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AsyncApiDocument } from './openapi/asyncapi.controller';
import { OpenApiDocument } from './openapi/openapi.controller';
import { Logger as NestLogger } from 'nestjs-pino';
import { ApiKeysService } from './apikeys/api-keys.service';
import { GatewayConfig, loadGatewayConfig } from './config';
import { GATEWAY_SCHEMA, gatewayEntities, gatewayMigrations } from './database';
import { GatewayDeps, GatewayModule } from './gateway.module';
import { frameworkErrorHandler, MAX_PARAM_LENGTH } from './http/framework-error';
import { startInternalServer } from './health/internal-server';
import { HttpDrain } from './http/http-drain';
import { answerClientError } from './http/oversized-request';
import { installPipeline } from './http/pipeline';
import { BODY_LIMIT_BYTES } from './http/request-body';
import { requestIdOf } from './http/request-log';
import { connectRedis } from './redis';

/**
 * The largest bodies the API takes: any request, a batch write, an import upload. A proxy in front of the
 * gateway must take at least the largest (the deployment checks compare the Ingress's limit with it).
 */
export const API_BODY_LIMITS = { request: BODY_LIMIT_BYTES, batch: BatchLimits.bodyBytes, upload: ImportLimits.bytes } as const;

export interface RunningGateway {
  app: NestFastifyApplication;
  config: GatewayConfig;
  url: string;
  /** The full status on the health port; `/health/live`, `/health/ready` and `/metrics` are beside it. */
  healthUrl: string;
  close(): Promise<void>;
}

export function gatewayDatabase(
  config: Pick<GatewayConfig, 'databaseUrl' | 'databasePoolSize' | 'databaseMigrations' | 'databaseMigrationsWaitSeconds' | 'databaseAppRole'>,
): DatabaseSpec {
  return {
    url: config.databaseUrl,
    schema: GATEWAY_SCHEMA,
    entities: gatewayEntities,
    migrations: gatewayMigrations,
    poolSize: config.databasePoolSize ?? 20,
    migrationsMode: config.databaseMigrations,
    verifyWaitMs: config.databaseMigrationsWaitSeconds * 1000,
    appRole: config.databaseAppRole,
  };
}

/** `main.js migrate` of the gateway: its schema only, as a role that may create; see migrateService. */
export function migrateGateway(env: Env = process.env): Promise<string[]> {
  return migrateDatabase({ ...gatewayDatabase(loadBaseConfig(env)), poolSize: 2 });
}

/**
 * The gateway's Fastify: routing as Express did it (paths case-insensitive, a trailing slash ignored,
 * ids up to MAX_PARAM_LENGTH), the client's address through TRUSTED_PROXIES only, request ids of our
 * own, and malformed HTTP and paths answered in the API's error shape.
 */
function gatewayAdapter(config: GatewayConfig, logger: Logger): FastifyAdapter {
  return new FastifyAdapter({
    trustProxy: config.trustedProxies.length ? config.trustedProxies : false,
    genReqId: requestIdOf,
    bodyLimit: BODY_LIMIT_BYTES,
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorHandler(logger),
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
  });
}

/** Starts the HTTP gateway: request ids and logs, key check, rate limit, body parsing, then routes. */
export async function startGateway(env: Env = process.env): Promise<RunningGateway> {
  const config = loadGatewayConfig(env);
  const logger = createLogger('gateway', config.logLevel);
  const database = gatewayDatabase(config);
  const dataSource = await openDatabase(database);
  const nc = await connectNats(config.natsUrl, 'crm-gateway', natsUser(config)).catch(async (err) => {
    await dataSource.destroy();
    throw err;
  });
  const redis = await connectRedis(config.redisUrl, logger).catch(async (err) => {
    await nc.close();
    await dataSource.destroy();
    throw err;
  });

  const app = await NestFactory.create<NestFastifyApplication>(
    GatewayModule.register({ config, logger, database, dataSource, nc, redis }),
    gatewayAdapter(config, logger),
    {
      bodyParser: false,
      bufferLogs: true,
      abortOnError: false,
    },
  );
  app.useLogger(app.get(NestLogger));
  await app
    .get<CrmNatsClient>(CRM_RPC)
    .connect()
    .catch(async (err: Error) => {
      await app.close().catch(() => undefined);
      await nc.close();
      await dataSource.destroy();
      throw new StartupError(`NATS at ${config.natsUrl} is unreachable: ${err.message}`);
    });

  // Memory: both documents, and the generators only they use, are built on the first request for them.
  const openApi = app.get(OpenApiDocument);
  openApi.buildWith(async () => (await import('./openapi/openapi-document')).createOpenApiDocument(app));
  app.get(AsyncApiDocument).buildWith(async () => (await import('./openapi/asyncapi-document')).createAsyncApiDocument(app));
  // The reference UI embeds the same document: the placeholder is never served, each request gets the built one.
  SwaggerModule.setup('docs', app, () => ({}) as OpenAPIObject, {
    raw: false,
    customSiteTitle: 'CRM API reference',
    patchDocumentOnRequest: () => openApi.get(),
  });

  const httpDrain = new HttpDrain(app.getHttpServer());
  installPipeline(app, httpDrain);

  if (config.bootstrapApiKey) await app.get(ApiKeysService).ensureBootstrapKey(config.bootstrapApiKey);
  // Probes see the process before the API opens; the API port never serves them or the metrics.
  const internal = await startInternalServer(app, config.healthHost, config.healthPort, logger).catch(async (err) => {
    await app.close().catch(() => undefined);
    await nc.close();
    await dataSource.destroy();
    throw err;
  });
  await app.listen(config.port, config.host).catch(async (err) => {
    await internal.close();
    throw err;
  });
  const { port } = app.getHttpServer().address() as { port: number };
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  logger.info({ url, healthUrl: internal.healthUrl, namespace: config.namespace }, 'gateway ready');

  let closed = false;
  return {
    app,
    config,
    url,
    healthUrl: internal.healthUrl,
    async close() {
      if (closed) return;
      closed = true;
      // Stop taking connections, finish the requests in flight with Connection: close, then close the rest.
      const cut = await httpDrain.drain(config.shutdownGraceMs);
      if (cut) logger.warn({ connections: cut }, 'closed connections still open at the end of the shutdown grace period');
      await app.close();
      await internal.close();
      await nc.drain().catch(() => undefined);
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}

/**
 * The gateway's modules with the default settings and no connections, for reading what it mounts without
 * starting it: only providers that are never instantiated hold the connections.
 */
export function offlineGatewayDeps(): GatewayDeps {
  const config = loadGatewayConfig({});
  const offline = null as never;
  return { config, logger: createLogger('gateway-offline', 'silent'), database: gatewayDatabase(config), dataSource: offline, nc: offline, redis: offline };
}

/**
 * The document a running gateway serves at /openapi.json, built without connecting to anything: Nest's
 * preview mode wires the modules and reads the routes but instantiates no provider, so no database,
 * NATS or Redis is touched. `npm run sdk` and the contract tests use it.
 */
export async function describeApiOffline(): Promise<OpenAPIObject> {
  const deps = offlineGatewayDeps();
  const { config } = deps;
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.register(deps), gatewayAdapter(config, deps.logger), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    return (await import('./openapi/openapi-document')).createOpenApiDocument(app);
  } finally {
    await app.close();
  }
}

/** The AsyncAPI document of the domain events on NATS (docs/asyncapi.json, served at /asyncapi.json), built the same way. */
export async function describeEventsOffline(): Promise<Record<string, unknown>> {
  return (await import('./openapi/asyncapi-document')).createAsyncApiDocument();
}

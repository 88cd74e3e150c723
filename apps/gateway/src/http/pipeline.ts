import { RawJson } from '@crm/messaging';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { RequestMetricsHook } from '../metrics/request-metrics.hook';
import { IdempotencyHook } from '../idempotency/idempotency.hook';
import { BatchCostHook } from '../rate-limit/batch-cost.hook';
import { AccessHook } from './access.hook';
import { HttpDrain } from './http-drain';
import { checkInput, installBodyParsers } from './request-body';
import { TracingHook } from './tracing.hook';

/**
 * The gateway's request pipeline as Fastify hooks, in the order a request meets them. The request log
 * (nestjs-pino's middleware) runs before all of them, when Fastify's onRequest hooks start.
 * - onRequest: the X-Request-Id echo, the drain's bookkeeping, the trace span, then the key check and rate limit, which
 *   answer a refused request before its body is read;
 * - the body is parsed (installBodyParsers);
 * - preValidation: the body, query and path parameters against InputLimits;
 * - preHandler: the rest of a batch's cost, then Idempotency-Key;
 * - then Nest: the scopes guard, the route, the exception filter; onResponse: the request metrics.
 * A forwarded route's answer is the service's JSON, unparsed (RawJson), and goes out as it arrived.
 * Added before the routes are, so every route and the not-found handler have them.
 */
export function installPipeline(app: NestFastifyApplication, drain: HttpDrain): void {
  const fastify = app.getHttpAdapter().getInstance();
  const tracing = app.get(TracingHook);
  const access = app.get(AccessHook);
  const batchCost = app.get(BatchCostHook);
  const idempotency = app.get(IdempotencyHook);
  const metrics = app.get(RequestMetricsHook);
  fastify.addHook('onRequest', (req, reply, done) => {
    // Fastify gave the request its id (requestIdOf), and the request log took it from there.
    reply.header('X-Request-Id', req.id);
    done();
  });
  fastify.addHook('onRequest', drain.onRequest);
  fastify.addHook('onRequest', (req, reply, done) => tracing.onRequest(req, reply, done));
  fastify.addHook('onRequest', (req, reply) => access.onRequest(req, reply));
  installBodyParsers(fastify);
  fastify.addHook('preValidation', checkInput);
  fastify.addHook('preHandler', (req, reply) => batchCost.preHandler(req, reply));
  fastify.addHook('preHandler', (req, reply) => idempotency.preHandler(req, reply));
  fastify.addHook('onResponse', (req, reply, done) => metrics.onResponse(req, reply, done));
  fastify.setReplySerializer(sendsRawJson);
}

/** Fastify's serialisation of a JSON answer (it sets the content type), except that RawJson is already JSON. */
export function sendsRawJson(payload: unknown): string {
  return payload instanceof RawJson ? payload.json : JSON.stringify(payload);
}

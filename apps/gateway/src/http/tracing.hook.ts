import { contextFrom, SpanKind, tracerFor } from '@crm/common';
import { Injectable } from '@nestjs/common';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyReply } from 'fastify';
import { GatewayRequest, pathOf } from './request-context';

const tracer = tracerFor('gateway');

/**
 * The server span of each request: a child of the caller's `traceparent` when one is sent, named by the
 * route template once routing has chosen one (`GET /contacts/:id`), so span names stay few. The span's
 * context rides on the request, for the hop to the owning service. It ends when the connection has
 * sent the response or given up on it.
 */
@Injectable()
export class TracingHook {
  onRequest(req: GatewayRequest, reply: FastifyReply, done: () => void): void {
    const header = req.headers.traceparent;
    const parent = contextFrom(Array.isArray(header) ? header[0] : header);
    const span = tracer.startSpan(`${req.method} ${pathOf(req)}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    req.traceContext = trace.setSpan(parent, span);
    reply.raw.once('close', () => {
      const route = req.is404 ? undefined : req.routeOptions.url;
      if (route) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', reply.raw.statusCode);
      if (reply.raw.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    done();
  }
}

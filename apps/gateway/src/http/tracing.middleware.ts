import { contextFrom, SpanKind, tracerFor } from '@crm/common';
import { Injectable, NestMiddleware } from '@nestjs/common';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Response } from 'express';
import { GatewayRequest } from './request-context';

const tracer = tracerFor('gateway');

/**
 * The server span of each request: a child of the caller's `traceparent` when one is sent, named by the
 * route template once routing has chosen one (`GET /contacts/:id`), so span names stay few. The span's
 * context rides on the request, for the hop to the owning service.
 */
@Injectable()
export class TracingMiddleware implements NestMiddleware {
  use(req: GatewayRequest, res: Response, next: NextFunction): void {
    const header = req.headers.traceparent;
    const parent = contextFrom(Array.isArray(header) ? header[0] : header);
    const span = tracer.startSpan(`${req.method} ${req.path}`, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    req.traceContext = trace.setSpan(parent, span);
    res.once('close', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      if (route) {
        span.updateName(`${req.method} ${req.baseUrl}${route}`);
        span.setAttribute('http.route', `${req.baseUrl}${route}`);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(req.traceContext, next);
  }
}

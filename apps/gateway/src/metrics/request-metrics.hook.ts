import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayMetrics } from './gateway-metrics';

/** Times every request, labelled by the route pattern it matched (never the raw path, which holds ids). */
@Injectable()
export class RequestMetricsHook {
  constructor(private readonly metrics: GatewayMetrics) {}

  /** An `onResponse` hook; Fastify's own clock says how long the reply took. */
  onResponse(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const route = req.is404 ? 'unmatched' : (req.routeOptions.url ?? 'unmatched');
    this.metrics.requests.observe({ method: req.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  }
}

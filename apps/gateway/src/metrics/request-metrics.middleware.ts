import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { GatewayMetrics } from './gateway-metrics';

/** Times every request, labelled by the route pattern it matched (never the raw path, which holds ids). */
@Injectable()
export class RequestMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: GatewayMetrics) {}

  use(req: Request, res: Response, next: NextFunction): void {
    const end = this.metrics.requests.startTimer({ method: req.method });
    res.on('finish', () => end({ route: (req.route?.path as string | undefined) ?? 'unmatched', status: String(res.statusCode) }));
    next();
  }
}

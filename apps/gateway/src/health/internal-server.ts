import { Logger } from '@crm/common';
import { ErrorCode } from '@crm/contracts';
import { MessagingMetrics } from '@crm/messaging';
import type { INestApplication } from '@nestjs/common';
import { createServer, ServerResponse } from 'http';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { GatewayHealth, HealthAnswer } from './gateway-health';

export interface InternalServer {
  /** `http://<host>:<port>/health` of the listening server. */
  healthUrl: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}

const json = (res: ServerResponse, answer: HealthAnswer) => send(res, answer.status, JSON.stringify(answer.body), 'application/json; charset=utf-8');

/**
 * The gateway's internal endpoints, on HEALTH_PORT and never on the API port: probes (`/health/live`,
 * `/health/ready`), the full status (`/health`, which touches every dependency and service on each call)
 * and Prometheus metrics (`/metrics`). The port is for the kubelet, the Prometheus scraper and
 * operators; the API port, which an Ingress publishes, serves the API only.
 */
export async function startInternalServer(app: INestApplication, host: string, port: number, logger: Logger): Promise<InternalServer> {
  const health = app.get(GatewayHealth);
  const registries = [app.get(GatewayMetrics).registry, app.get(MessagingMetrics).registry];
  const routes: Record<string, (res: ServerResponse) => Promise<void> | void> = {
    '/health/live': (res) => json(res, health.live()),
    '/health/ready': async (res) => json(res, await health.ready()),
    '/health': async (res) => json(res, await health.full()),
    '/metrics': async (res) => send(res, 200, await Registry.merge(registries).metrics(), 'text/plain; version=0.0.4; charset=utf-8'),
  };
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0].replace(/(.)\/+$/, '$1');
    const route = routes[path];
    const error = (status: number, code: ErrorCode, message: string) =>
      send(res, status, JSON.stringify({ error: { code, message } }), 'application/json; charset=utf-8');
    if (!route) return error(404, ErrorCode.NotFound, `The health port serves ${Object.keys(routes).join(', ')}.`);
    if (req.method !== 'GET' && req.method !== 'HEAD') return error(405, ErrorCode.MethodNotAllowed, 'Only GET is allowed here.');
    Promise.resolve(route(res)).catch((err: unknown) => {
      logger.error({ err, path }, 'internal endpoint failed');
      if (!res.headersSent) error(500, ErrorCode.Internal, 'An internal error occurred.');
    });
  });
  // Probes and scrapes are short; keep-alive connections of a scraper stay open between scrapes.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as { port: number };
  const healthUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}/health`;
  return {
    healthUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

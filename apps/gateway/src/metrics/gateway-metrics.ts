import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';

/** The gateway's own Prometheus metrics; GET /metrics serves them with the process's (MessagingMetrics). */
@Injectable()
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly requests = new Histogram({
    name: 'crm_http_request_duration_seconds',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly rateLimiterFailOpen = new Counter({
    name: 'crm_rate_limiter_fail_open_total',
    help: 'Requests let through without a rate-limit decision because Redis could not be reached',
    registers: [this.registry],
  });

  readonly rateLimited = new Counter({
    name: 'crm_rate_limited_total',
    help: 'Requests refused with 429',
    registers: [this.registry],
  });

  readonly apiKeyLookups = new Counter({
    name: 'crm_api_key_lookups_total',
    help: 'API key lookups in the database (one per request that passed the rate limiter with a well-formed key)',
    registers: [this.registry],
  });

  readonly apiKeyOutageAccepted = new Counter({
    name: 'crm_api_key_outage_accepted_total',
    help: 'Requests accepted on a recent verification of their key because the database was unreachable',
    registers: [this.registry],
  });
}

import { Injectable } from '@nestjs/common';
import { Counter, Histogram, Registry } from 'prom-client';

/** The gateway's own Prometheus metrics; GET /metrics on the health port serves them with the process's (MessagingMetrics). */
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

  readonly rateLimiterFailOpen = this.counter(
    'crm_rate_limiter_fail_open_total',
    'Requests let through without a rate-limit decision because Redis could not be reached',
  );

  readonly rateLimited = this.counter('crm_rate_limited_total', 'Requests refused with 429');

  readonly apiKeyLookups = this.counter(
    'crm_api_key_lookups_total',
    'API key lookups in the database (one per request that passed the rate limiter with a well-formed key)',
  );

  readonly apiKeyOutageAccepted = this.counter(
    'crm_api_key_outage_accepted_total',
    'Requests accepted on a recent verification of their key because the database was unreachable',
  );

  private counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }
}

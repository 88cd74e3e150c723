import { MessagingMetrics } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { DataSource } from 'typeorm';
import { SendResult } from '../endpoints/endpoint-client';

/** Webhook delivery in /metrics: outcomes, latency, retries waiting, subscriptions by status. */
@Injectable()
export class DeliveryMetrics {
  private readonly deliveries: Counter;
  private readonly latency: Histogram;

  constructor(metrics: MessagingMetrics, dataSource: DataSource) {
    this.deliveries = new Counter({
      name: 'crm_webhook_deliveries_total',
      help: 'Delivery attempts by outcome (success, failure) and HTTP status class (2xx to 5xx, or none when no answer came)',
      labelNames: ['outcome', 'status_class'],
      registers: [metrics.registry],
    });
    this.latency = new Histogram({
      name: 'crm_webhook_delivery_duration_seconds',
      help: 'Time from sending a delivery to its answer (or failure), by outcome',
      labelNames: ['outcome'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [metrics.registry],
    });
    const subscriptions = async () =>
      (await dataSource.query(
        `SELECT count(*) FILTER (WHERE status = 'active')::int AS active, count(*) FILTER (WHERE status = 'paused')::int AS paused,
                count(*) FILTER (WHERE status = 'disabled')::int AS disabled,
                count(*) FILTER (WHERE status = 'active' AND retry_count > 0)::int AS retrying
         FROM subscriptions`,
      )) as Array<Record<'active' | 'paused' | 'disabled' | 'retrying', number>>;
    new Gauge({
      name: 'crm_webhook_subscriptions',
      help: 'Webhook subscriptions by status',
      labelNames: ['status'],
      registers: [metrics.registry],
      async collect() {
        const [row] = await subscriptions().catch(() => [undefined]);
        if (!row) return;
        for (const status of ['active', 'paused', 'disabled'] as const) this.set({ status }, row[status]);
      },
    });
    new Gauge({
      name: 'crm_webhook_retries_pending',
      help: 'Active subscriptions whose next event failed and waits for a retry',
      registers: [metrics.registry],
      async collect() {
        const [row] = await subscriptions().catch(() => [undefined]);
        if (row) this.set(row.retrying);
      },
    });
  }

  record(result: SendResult): void {
    const outcome = result.ok ? 'success' : 'failure';
    const statusClass = result.httpStatus === null ? 'none' : `${Math.floor(result.httpStatus / 100)}xx`;
    this.deliveries.inc({ outcome, status_class: statusClass });
    this.latency.observe({ outcome }, result.durationMs / 1000);
  }
}

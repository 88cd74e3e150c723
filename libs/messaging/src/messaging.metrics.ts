import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { outboxBacklog } from './outbox/outbox-backlog';

/** How often the event-loop delay histogram (nodejs_eventloop_lag_*) takes a sample. */
export const EVENT_LOOP_SAMPLE_MS = 1000;

/**
 * The Prometheus registry of one process, served at GET /metrics: process metrics, the outbox backlog,
 * how far each event reader and consumer is behind the stream, and (in services) request handling.
 * Feature code adds its own metrics to `registry`.
 */
@Injectable()
export class MessagingMetrics {
  readonly registry = new Registry();
  private readonly lags = new Map<string, () => Promise<number>>();

  readonly rpcDuration = new Histogram({
    name: 'crm_rpc_duration_seconds',
    help: 'Requests handled over NATS, by request name and outcome (ok or the error code)',
    labelNames: ['pattern', 'outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly outboxOrderBreaks = new Counter({
    name: 'crm_outbox_order_breaks_total',
    help: 'Events the outbox relay found stored after a later event of their resource (a message JetStream lost while a later one landed; docs/events.md, "The relay")',
    registers: [this.registry],
  });

  readonly streamResets = new Counter({
    name: 'crm_stream_resets_total',
    help: 'Times a reader found the event stream was not the one its checkpoint belongs to (replaced, truncated, or a restored database; docs/operations.md, "Stream reset")',
    labelNames: ['consumer', 'reason'],
    registers: [this.registry],
  });

  readonly streamRecovering = new Gauge({
    name: 'crm_stream_recovering',
    help: 'Whether a reader is recovering from a stream reset (1) or reading the stream (0)',
    labelNames: ['consumer'],
    registers: [this.registry],
  });

  readonly streamGapEvents = new Counter({
    name: 'crm_stream_gap_events_total',
    help: 'Events a reader found lost for good in a stream reset: no producing service still held them (a stream.gap marker says which)',
    labelNames: ['consumer'],
    registers: [this.registry],
  });

  readonly outboxPrunes = new Counter({
    name: 'crm_outbox_prunes_total',
    help: 'Times this process deleted the outbox rows the event log, the webhook intake and every durable consumer had passed',
    registers: [this.registry],
  });

  readonly streamCatchUps = new Gauge({
    name: 'crm_erasure_stream_waits',
    help: 'Erasures waiting for a reader of the event stream to copy what the stream held when they asked (docs/privacy.md)',
    labelNames: ['consumer'],
    registers: [this.registry],
  });

  constructor(dataSource: DataSource) {
    // prom-client samples event-loop delay with a timer at this period; its default, 10 ms, woke each process
    // 100 times a second and cost about 3 ms of CPU a second doing nothing. Once a second still catches
    // every block longer than a second and most shorter ones.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    const lags = this.lags;
    const outbox = () => outboxBacklog(dataSource);
    new Gauge({
      name: 'crm_outbox_pending',
      help: 'Domain events committed but not yet published to JetStream',
      registers: [this.registry],
      async collect() {
        this.set((await outbox().catch(() => ({ pending: Number.NaN }))).pending);
      },
    });
    new Gauge({
      name: 'crm_outbox_oldest_age_seconds',
      help: 'Age of the oldest event waiting in the outbox (0 when it is empty)',
      registers: [this.registry],
      async collect() {
        this.set((await outbox().catch(() => ({ oldest_age_seconds: Number.NaN }))).oldest_age_seconds);
      },
    });
    new Gauge({
      name: 'crm_consumer_lag_events',
      help: 'Events in the stream that a reader or durable consumer of this process has not handled yet',
      labelNames: ['consumer'],
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const [consumer, lag] of lags) {
          const value = await lag().catch(() => undefined);
          if (value !== undefined) this.set({ consumer }, value);
        }
      },
    });
  }

  /** Reports a reader's or consumer's lag under its name at every scrape. */
  trackLag(consumer: string, lag: () => Promise<number>): void {
    this.lags.set(consumer, lag);
  }
}

import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { DeadEvents, outboxBacklog } from '@crm/messaging';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Health checks of the dependencies every process has: its database and the broker. */
@Injectable()
export class DependencyHealth {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly typeOrm: TypeOrmHealthIndicator,
  ) {}

  /** Terminus' own ping of the TypeORM connection. */
  database(dataSource: DataSource, timeoutMs = 1000) {
    return this.typeOrm.pingCheck('database', { connection: dataSource, timeout: timeoutMs });
  }

  async nats(nc: NatsConnection, timeoutMs = 1000) {
    const check = this.indicators.check('nats');
    try {
      if (nc.isClosed()) throw new Error('connection closed');
      await withTimeout(nc.flush(), timeoutMs, 'NATS');
      return check.up();
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
  }

  /**
   * The outbox backlog: events committed and not yet acknowledged by JetStream, and how long the oldest
   * has waited. A backlog is lag, not an outage (the service still serves writes), so this stays up; it
   * is down only when the outbox cannot be read.
   */
  async outbox(dataSource: DataSource, timeoutMs = 1000) {
    const check = this.indicators.check('outbox');
    try {
      return check.up({ ...(await withTimeout(outboxBacklog(dataSource), timeoutMs, 'PostgreSQL')) });
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
  }

  /**
   * Events the consumers parked as dead, per consumer. Parked events need an operator but do not stop
   * the service, so this stays up; it is down only when the count cannot be read.
   */
  async deadEvents(deadEvents: DeadEvents, timeoutMs = 1000) {
    const check = this.indicators.check('dead_events');
    try {
      const byConsumer = await withTimeout(deadEvents.counts(), timeoutMs, 'PostgreSQL');
      const parked = Object.values(byConsumer).reduce((a, b) => a + b, 0);
      return check.up({ parked, consumers: byConsumer });
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
  }
}

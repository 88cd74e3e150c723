import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
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
  constructor(private readonly indicators: HealthIndicatorService) {}

  async database(dataSource: DataSource, timeoutMs = 1000) {
    const check = this.indicators.check('database');
    try {
      await withTimeout(dataSource.query('SELECT 1'), timeoutMs, 'PostgreSQL');
      return check.up();
    } catch (err) {
      return check.down({ message: (err as Error).message });
    }
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
}

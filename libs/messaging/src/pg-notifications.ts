import { sessionConnection, type Logger } from '@crm/common';
import { Client } from 'pg';

/** The channel a service's `name` notifications go on: one per schema, since stacks may share a database. */
export function notifyChannel(name: string, schema: string): string {
  return `${name}_${schema}`;
}

/** SQL that sends a `name` notification on the schema of the session's search path, for a statement to send it in the same round trip. */
export function notifySql(name: string, payload = `''`): string {
  return `pg_notify('${name}_' || current_schema(), ${payload})`;
}

export interface PgNotificationsOptions {
  databaseUrl: string;
  channel: string;
  logger: Logger;
  /** Each notification's payload. */
  notified: (payload: string) => void;
  /**
   * Called once listening (again): a notification sent while no connection listened is lost, so whoever
   * waits on them looks once for what it may have missed.
   */
  listening: () => void;
  /** Waits before reconnecting after the connection is lost, first to last (the last repeats). */
  reconnectMs?: number[];
}

/**
 * One dedicated connection LISTENing on a channel, reconnected when it drops. Nothing runs while it
 * waits: the process sleeps until PostgreSQL sends a notification.
 */
export class PgNotifications {
  private client?: Client;
  private retry?: NodeJS.Timeout;
  private failures = 0;
  private stopped = false;

  constructor(private readonly options: PgNotificationsOptions) {}

  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client(sessionConnection(this.options.databaseUrl));
    client.on('notification', (n) => this.options.notified(n.payload ?? ''));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN "${this.options.channel}"`);
    } catch (err) {
      this.lost(client, err as Error);
      return;
    }
    if (this.stopped || this.client !== client) return;
    this.failures = 0;
    this.options.listening();
  }

  private lost(client: Client, err?: Error): void {
    // Only the connection in use counts: one that failed twice ('error', then 'end') is retried once.
    if (this.stopped || this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    const delays = this.options.reconnectMs ?? [100, 500, 1000, 5000];
    const delay = delays[Math.min(this.failures++, delays.length - 1)];
    this.options.logger.warn({ err: err?.message, channel: this.options.channel }, `lost the notification listener; reconnecting in ${delay} ms`);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, delay);
    this.retry.unref();
  }
}

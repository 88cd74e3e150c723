import type { Logger } from '@crm/common';
import type { ServiceName } from '@crm/contracts';

export const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');

export interface MessagingOptions {
  service: ServiceName;
  namespace: string;
  rpcTimeoutMs: number;
  logger: Logger;
  /** Connection string of the service's database; the outbox relay listens for commits on it. */
  databaseUrl: string;
  /** The service's own PostgreSQL schema, where its outbox table lives. */
  schema: string;
  /** How often the relay looks for unpublished events when no commit notification arrives. */
  outboxPollMs?: number;
  /** How long JetStream keeps events for consumers that fell behind (the log itself is kept by the events service). */
  streamMaxAgeSeconds?: number;
}

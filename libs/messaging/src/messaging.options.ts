import type { Logger } from '@crm/common';
import type { ServiceName } from '@crm/contracts';
import type { RetryPolicy } from './dead-events/bounded-handling';
import type { NatsUser } from './nats';

export const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');

export interface MessagingOptions {
  service: ServiceName;
  namespace: string;
  logger: Logger;
  /** Connection string of the service's database; the outbox relay listens for commits on it. */
  databaseUrl: string;
  /** The NATS server(s) the process uses; the outbox relay opens a connection of its own to them. */
  natsUrl: string;
  /** The process's NATS user, for the relay's connection as for the shared one. */
  natsUser?: NatsUser;
  /** The service's own PostgreSQL schema, where its outbox table lives. */
  schema: string;
  /** How often the relay looks for unpublished events when no commit notification arrives. */
  outboxPollMs?: number;
  /** How long JetStream keeps events for consumers that fell behind (the log itself is kept by the events service). */
  streamMaxAgeSeconds?: number;
  /** Most bytes the event stream keeps per replica (JETSTREAM_MAX_BYTES; 0: no size limit). */
  streamMaxBytes?: number;
  /** Copies of the event stream in a NATS cluster (JETSTREAM_REPLICAS); the relay keeps the stream at it. */
  streamReplicas?: number;
  /** How often a consumer tries an event before parking it as dead, and the waits in between. */
  eventRetry?: Partial<RetryPolicy>;
  /** How often the service looks for parked events an operator asked to retry in case the request's notification was lost (60 s). */
  deadEventPollMs?: number;
  /**
   * The records of this service whose events carry a version (docs/exports.md): the outbox gives each
   * record a change names a new version and stamps it on those events. None unless the service says.
   */
  recordVersions?: ReadonlyArray<{ table: string; types: readonly string[]; id: string }>;
}

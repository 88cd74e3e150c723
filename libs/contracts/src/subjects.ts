/**
 * Every NATS name the services agree on. Call sites use these builders, never string literals.
 * Names are prefixed by the deployment's namespace (CRM_NAMESPACE) so two environments, or a test run
 * beside a running stack, can share one NATS server without answering each other.
 */
export const ServiceName = {
  Gateway: 'gateway',
  Contacts: 'contacts',
  Deals: 'deals',
  Events: 'events',
  Webhooks: 'webhooks',
} as const;
export type ServiceName = (typeof ServiceName)[keyof typeof ServiceName];

/** The services that answer requests over NATS (the gateway only asks). */
export const RPC_SERVICES = [ServiceName.Contacts, ServiceName.Deals, ServiceName.Events, ServiceName.Webhooks] as const;
export type RpcServiceName = (typeof RPC_SERVICES)[number];

/** `<namespace>.rpc.<service>.<resource>.<action>`: request/reply, load-balanced over a queue group. */
export function rpcSubject(namespace: string, name: string): string {
  return `${namespace}.rpc.${name}`;
}

export function rpcServiceWildcard(namespace: string, service: RpcServiceName): string {
  return `${namespace}.rpc.${service}.>`;
}

export function rpcQueueGroup(namespace: string, service: RpcServiceName): string {
  return `${namespace}.${service}`;
}

/** Domain events: `<namespace>.events.<type>`, e.g. `crm.events.contact.created`. */
export function eventSubject(namespace: string, type: string): string {
  return `${namespace}.events.${type}`;
}

export function eventSubjectWildcard(namespace: string): string {
  return `${namespace}.events.>`;
}

/** Tells every gateway replica at once that an API key was revoked (the CLI sends it too). */
export function keyRevocationSubject(namespace: string): string {
  return `${namespace}.gateway.apikeys.revoked`;
}

/**
 * The gateway's part of an erasure (docs/privacy.md): the contacts service asks, one gateway replica (a
 * queue group) redacts the stored Idempotency-Key answers that name the person and answers with its count.
 */
export function gatewayErasureSubject(namespace: string): string {
  return `${namespace}.gateway.privacy.erase`;
}

/** The queue group gateway replicas answer gatewayErasureSubject in: one of them answers each request. */
export function gatewayQueueGroup(namespace: string): string {
  return `${namespace}.gateway`;
}

/** The JetStream stream holding every domain event, e.g. `CRM_EVENTS`. */
export function eventStreamName(namespace: string): string {
  return `${namespace.toUpperCase()}_EVENTS`;
}

/** Durable JetStream consumer names, one per consuming service. */
export const EventConsumer = {
  EventLog: 'event-log',
  Webhooks: 'webhooks',
  Deals: 'deals-activity',
  /** The contacts service follows deal deletions to detach activities and tasks. */
  Contacts: 'contacts-deal-links',
} as const;

/**
 * Where the event log and the webhook intake say how far they have read the stream (`{consumer, stream, seq}`,
 * core NATS, every few seconds): each producing service deletes the outbox rows both have passed.
 */
export function streamCheckpointSubject(namespace: string): string {
  return `${namespace}.stream.checkpoint`;
}

/** Asks one producing service for a page of its outbox, in commit order (the readers' recovery after a stream reset). */
export function outboxRowsSubject(namespace: string, service: ServiceName): string {
  return `${namespace}.outbox.rows.${service}`;
}

/** Where the pages asked for on `outboxRowsSubject` are answered: `<namespace>.outbox.reply.<id>`. */
export function outboxReplySubject(namespace: string, id = '*'): string {
  return `${namespace}.outbox.reply.${id}`;
}

import { EventType } from './events';
import {
  EventConsumer,
  eventStreamName,
  eventSubject,
  eventSubjectWildcard,
  gatewayErasureSubject,
  keyRevocationSubject,
  outboxReplySubject,
  outboxRowsSubject,
  RPC_SERVICES,
  rpcServiceWildcard,
  RpcServiceName,
  ServiceName,
  streamCheckpointSubject,
} from './subjects';

/**
 * The NATS user of each process and what it may publish and subscribe to: the one source of the server's
 * authorization block (`npm run nats-users`, deploy/nats/crm-users.conf) and of the deploy checks.
 * Everything not listed is denied, so a process whose credentials leak can neither answer another
 * service's requests nor ask a service it never asks.
 */
export interface NatsUserPermissions {
  user: string;
  publish: string[];
  subscribe: string[];
}

/** The services each process asks over RPC; the gateway forwards the API to all four. */
export const RPC_CALLEES: Record<ServiceName, readonly RpcServiceName[]> = {
  [ServiceName.Gateway]: RPC_SERVICES,
  [ServiceName.Contacts]: [ServiceName.Deals],
  [ServiceName.Deals]: [ServiceName.Contacts],
  [ServiceName.Events]: [],
  [ServiceName.Webhooks]: [],
};

/**
 * How each service reads the event stream: a durable consumer it owns (with the services whose events it
 * handles, whose outboxes it reads when the consumer has to be made again), or an ordered consumer of its own reader.
 */
const STREAM_READS: Record<ServiceName, { durable: string; sources: readonly ServiceName[] } | 'ordered' | undefined> = {
  [ServiceName.Gateway]: undefined,
  [ServiceName.Contacts]: { durable: EventConsumer.Contacts, sources: [ServiceName.Deals] },
  [ServiceName.Deals]: { durable: EventConsumer.Deals, sources: [ServiceName.Contacts] },
  [ServiceName.Events]: 'ordered',
  [ServiceName.Webhooks]: 'ordered',
};

/** The durable consumers the services keep on the event stream; every outbox keeps its rows until they pass them. */
export const DURABLE_CONSUMERS: readonly string[] = Object.values(STREAM_READS).flatMap((reads) => (reads && reads !== 'ordered' ? [reads.durable] : []));

/** `<namespace>-<process>`: one user per process, distinct per deployment sharing a server. */
export function natsUserName(namespace: string, process: ServiceName): string {
  return `${namespace}-${process}`;
}

/** The variable the NATS server reads the process's password from, e.g. CRM_NATS_GATEWAY_PASSWORD. */
export function natsPasswordVariable(namespace: string, process: ServiceName): string {
  return `${namespace}_NATS_${process}_PASSWORD`.toUpperCase();
}

export function natsUserPermissions(namespace: string, process: ServiceName): NatsUserPermissions {
  const stream = eventStreamName(namespace);
  const api = '$JS.API';
  const publish = [
    // Its outbox relay: the stream (created or brought to JETSTREAM_REPLICAS) and the events it publishes.
    `${api}.INFO`,
    `${api}.STREAM.INFO.${stream}`,
    `${api}.STREAM.CREATE.${stream}`,
    `${api}.STREAM.UPDATE.${stream}`,
    eventSubjectWildcard(namespace),
    ...RPC_CALLEES[process].map((callee) => rpcServiceWildcard(namespace, callee)),
    // Pages of its outbox, answered to a reader recovering from a stream reset.
    outboxReplySubject(namespace, '>'),
    // Its outbox ledger keeps rows until every durable consumer has passed them (their state, read only).
    ...DURABLE_CONSUMERS.map((durable) => `${api}.CONSUMER.INFO.${stream}.${durable}`),
  ];
  // Replies to its requests and JetStream's answers come to its inbox. Its outbox ledger hears the readers'
  // checkpoints and answers for its own outbox.
  const subscribe = ['_INBOX.>', streamCheckpointSubject(namespace), outboxRowsSubject(namespace, process)];
  if (process === ServiceName.Gateway) {
    publish.push(keyRevocationSubject(namespace));
    // The contacts service asks it to erase a person from its stored Idempotency-Key answers.
    subscribe.push(keyRevocationSubject(namespace), eventSubject(namespace, EventType.ApiKeyRevoked), gatewayErasureSubject(namespace));
  } else {
    subscribe.push(rpcServiceWildcard(namespace, process));
  }
  if (process === ServiceName.Contacts) publish.push(gatewayErasureSubject(namespace));
  const reads = STREAM_READS[process];
  if (reads === 'ordered') {
    // An ordered consumer is ephemeral, named by the client, and replaced after a gap.
    for (const verb of ['CREATE', 'INFO', 'DELETE', 'MSG.NEXT']) publish.push(`${api}.CONSUMER.${verb}.${stream}.*`);
    // The event log and the webhook intake say their checkpoints, and after a stream reset ask every
    // service for its outbox (docs/operations.md, "Stream reset").
    publish.push(streamCheckpointSubject(namespace), `${namespace}.outbox.rows.*`);
    subscribe.push(outboxReplySubject(namespace, '>'));
  } else if (reads) {
    const { durable, sources } = reads;
    // A consumer not on the stream (its first start, a stream made again) first reads its sources' outboxes.
    publish.push(...sources.map((source) => outboxRowsSubject(namespace, source)));
    subscribe.push(outboxReplySubject(namespace, '>'));
    publish.push(
      `${api}.CONSUMER.INFO.${stream}.${durable}`,
      `${api}.CONSUMER.CREATE.${stream}.${durable}`,
      // With a filter subject the subject ends in it.
      `${api}.CONSUMER.CREATE.${stream}.${durable}.>`,
      `${api}.CONSUMER.DURABLE.CREATE.${stream}.${durable}`,
      `${api}.CONSUMER.MSG.NEXT.${stream}.${durable}`,
      `$JS.ACK.${stream}.${durable}.>`,
    );
  }
  return { user: natsUserName(namespace, process), publish: [...new Set(publish)], subscribe };
}

/**
 * The nats-server authorization block for one deployment. Passwords are not in it: the server reads each
 * from its environment (`$CRM_NATS_GATEWAY_PASSWORD`). A process may answer the requests it receives
 * (allow_responses; the gateway answers only an erasure's request) without being allowed to publish to inboxes at large.
 */
export function natsAuthorizationConfig(namespace: string): string {
  const quoted = (subjects: string[]) => subjects.map((s) => `"${s}"`).join(', ');
  const users = ([ServiceName.Gateway, ...RPC_SERVICES] as ServiceName[]).map((process) => {
    const { user, publish, subscribe } = natsUserPermissions(namespace, process);
    return [
      `    {`,
      `      user: "${user}"`,
      `      password: $${natsPasswordVariable(namespace, process)}`,
      `      permissions: {`,
      `        publish: { allow: [${quoted(publish)}] }`,
      `        subscribe: { allow: [${quoted(subscribe)}] }`,
      `        allow_responses: true`,
      `      }`,
      `    }`,
    ].join('\n');
  });
  return [
    `# Generated by \`npm run nats-users -- ${namespace}\` from libs/contracts/src/nats-users.ts; do not edit.`,
    `# One NATS user per process of the "${namespace}" deployment (docs/deployment.md, "NATS users").`,
    `authorization {`,
    `  users: [`,
    users.join('\n'),
    `  ]`,
    `}`,
    ``,
  ].join('\n');
}

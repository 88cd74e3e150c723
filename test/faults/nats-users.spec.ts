import {
  EventConsumer,
  eventStreamName,
  keyRevocationSubject,
  natsAuthorizationConfig,
  natsPasswordVariable,
  natsUserName,
  RPC_SERVICES,
  rpcSubject,
  ServiceName,
} from '@crm/contracts';
import { INFLATED_MAX_BYTES } from '@crm/messaging';
import { randomUUID } from 'crypto';
import { connect, ErrorCode, NatsConnection, NatsError } from 'nats';
import { gzipSync } from 'zlib';
import { eventually } from '../support/api-client';
import { FaultStack, faultNamespace, STACK_PROCESSES, startFaultStack, StackProcess } from '../support/fault-stack';
import { natsPassword, startNatsServer } from '../support/processes';
import { Receiver } from '../support/webhooks-receiver';

/**
 * The whole stack on a private NATS server that knows only the users of libs/contracts/src/nats-users.ts
 * (the source of deploy/nats/crm-users.conf): every process works as its own user, and a user cannot
 * step outside its own subjects.
 */
describe('NATS users', () => {
  const namespace = faultNamespace();
  const passwords = Object.fromEntries(STACK_PROCESSES.map((p) => [natsPasswordVariable(namespace, p), natsPassword()]));
  const credentials = (process: StackProcess) => ({ user: natsUserName(namespace, process), pass: passwords[natsPasswordVariable(namespace, process)] });
  let stack: FaultStack;
  let receiver: Receiver;
  const connections: NatsConnection[] = [];

  const connectAs = async (process: StackProcess) => {
    const nc = await connect({ servers: stack.nats.url, ...credentials(process) });
    connections.push(nc);
    return nc;
  };

  beforeAll(async () => {
    const nats = await startNatsServer({ config: natsAuthorizationConfig(namespace), env: passwords });
    stack = await startFaultStack(
      { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true' },
      { namespace, nats, envOf: (process) => ({ NATS_USER: credentials(process).user, NATS_PASSWORD: credentials(process).pass }) },
    );
    receiver = await Receiver.start();
  }, 300_000);

  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    await receiver?.close();
    await stack?.stop();
  });

  it('runs the stack with each process as its own user: requests, service-to-service calls, events, consumers and deliveries', async () => {
    const { api } = stack;
    expect((await fetch(stack.processes.gateway.healthUrl)).status).toBe(200);
    expect((await api.post('/webhooks', { name: 'users', url: receiver.url })).status).toBe(201);
    const contact = await api.post('/contacts', { email: `users-${namespace}@example.com` });
    expect(contact.status).toBe(201);
    const pipeline = await api.post('/pipelines', { name: 'Users', stages: [{ name: 'New', type: 'open' }] });
    expect(pipeline.status).toBe(201);
    // deals asks contacts for the contact.
    const { id: pipelineId, stages } = pipeline.body.data;
    const deal = await api.post('/deals', { name: 'Users', pipeline_id: pipelineId, stage_id: stages[0].id, contact_id: contact.body.data.id });
    expect({ status: deal.status, body: deal.body }).toMatchObject({ status: 201 });
    // contacts asks deals for the contact's deals.
    expect((await api.get(`/contacts/${contact.body.data.id}/deals`)).status).toBe(200);
    // The relays' events reach the event log (an ordered consumer) and the webhooks (another).
    await eventually(async () => {
      const types = ((await api.get('/events?limit=50')).body.data as Array<{ type: string }>).map((e) => e.type);
      return types.includes('contact.created') && types.includes('deal.created') ? true : undefined;
    });
    await receiver.waitFor(1, 'deal.created');
    // contacts' durable consumer follows the deal's deletion.
    expect((await api.delete(`/deals/${deal.body.data.id}`)).status).toBe(204);
    await receiver.waitFor(1, 'deal.deleted');
    // A consumer or reader the server refused would have said so (the stack logs warnings). The logs are
    // read once every reader is past the deletion and each process has logged a marker after that.
    await eventually(async () => {
      const deleted = (await api.get('/events?type=deal.deleted')).body.data as Array<{ data: { deal_id: string } }>;
      return deleted.some((e) => e.data.deal_id === deal.body.data.id) ? true : undefined;
    }, 120_000);
    await acknowledgedAll(ServiceName.Contacts, EventConsumer.Contacts);
    await acknowledgedAll(ServiceName.Deals, EventConsumer.Deals);
    const output = await logsAfterMarkers();
    expect(output).not.toMatch(/permissions violation|lost JetStream|event reader failed/i);
  });

  /** Waits until the service's durable consumer has every event it reads acknowledged. */
  async function acknowledgedAll(service: StackProcess, durable: string): Promise<void> {
    const jsm = await (await connectAs(service)).jetstreamManager();
    await eventually(async () => {
      const info = await jsm.consumers.info(eventStreamName(namespace), durable);
      return info.num_pending === 0 && info.num_ack_pending === 0 ? true : undefined;
    }, 120_000);
  }

  /**
   * Every process's log, once a line it wrote after everything before this call is in it: a line written
   * before that marker is then in what is read, however late the pipe hands it over. Each service logs
   * the refusal of an RPC request that would inflate past the limit, naming its subject (which carries
   * the marker); the gateway logs an unreadable key revocation notice, which nothing else sends it.
   */
  async function logsAfterMarkers(): Promise<string> {
    const marker = `marker-${randomUUID()}`;
    const unreadable = 'ignored an unreadable key revocation notice';
    expect(stack.processes.gateway.output()).not.toContain(unreadable);
    const gateway = await connectAs(ServiceName.Gateway);
    const tooLarge = gzipSync(Buffer.alloc(INFLATED_MAX_BYTES + 1));
    // Each answered: the service has logged the refusal.
    for (const service of RPC_SERVICES) await gateway.request(rpcSubject(namespace, `${service}.${marker}`), tooLarge, { timeout: 60_000 });
    gateway.publish(keyRevocationSubject(namespace), Buffer.from(marker));
    return eventually(async () => {
      const logs = STACK_PROCESSES.map((p) => stack.processes[p].output());
      const marked = STACK_PROCESSES.every((p, i) => logs[i].includes(p === 'gateway' ? unreadable : marker));
      return marked ? logs.join('\n') : undefined;
    }, 120_000);
  }

  it('refuses a connection without a user or with another password', async () => {
    await expect(connect({ servers: stack.nats.url })).rejects.toMatchObject({ code: ErrorCode.AuthorizationViolation });
    await expect(connect({ servers: stack.nats.url, user: natsUserName(namespace, ServiceName.Contacts), pass: 'guess' })).rejects.toMatchObject({
      code: ErrorCode.AuthorizationViolation,
    });
  });

  it("keeps a service from answering another service's requests, and from asking a service it never asks", async () => {
    const contacts = await connectAs(ServiceName.Contacts);
    await expect(refusedSubscription(contacts, rpcSubject(namespace, 'deals.>'))).resolves.toBe(ErrorCode.PermissionsViolation);
    const webhooks = await connectAs(ServiceName.Webhooks);
    await expect(refusedRequest(webhooks, rpcSubject(namespace, 'contacts.contacts.list'))).resolves.toBe(ErrorCode.PermissionsViolation);
    // Nor read the domain events or the gateway's key notices off the wire.
    await expect(refusedSubscription(webhooks, `${namespace}.events.>`)).resolves.toBe(ErrorCode.PermissionsViolation);
    await expect(refusedSubscription(webhooks, `${namespace}.gateway.>`)).resolves.toBe(ErrorCode.PermissionsViolation);
    // Nor delete the event stream.
    await expect(refusedRequest(webhooks, `$JS.API.STREAM.DELETE.${namespace.toUpperCase()}_EVENTS`)).resolves.toBe(ErrorCode.PermissionsViolation);
    // While the gateway asks every service.
    const gateway = await connectAs(ServiceName.Gateway);
    expect(gateway.isClosed()).toBe(false);
  });
});

/** The error the server answers a subscription with: the client hands it to the subscription's callback. */
function refusedSubscription(nc: NatsConnection, subject: string): Promise<string> {
  return new Promise((resolve) => {
    nc.subscribe(subject, { callback: (err) => err && resolve((err as NatsError).code) });
  });
}

/** A request the server refuses to route fails with the permission error, not a timeout. */
async function refusedRequest(nc: NatsConnection, subject: string): Promise<string> {
  const failure = await nc.request(subject, new Uint8Array(), { timeout: 60_000 }).then(
    () => 'answered',
    (err: NatsError) => err.code,
  );
  return failure;
}

import { installTracing } from '@crm/common';
import { InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

/**
 * The whole stack runs in this process, so one in-memory exporter sees every process's spans; the
 * NATS and JetStream hops between them still carry the trace only in message headers, as between pods.
 */
describe('one trace from the HTTP request to the webhook receiver', () => {
  const exporter = new InMemorySpanExporter();
  let stopTracing: () => Promise<void>;
  let stack: TestStack;
  let receiver: Receiver;
  beforeAll(async () => {
    stopTracing = await installTracing(new SimpleSpanProcessor(exporter), 'crm-test');
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '50' } });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
    await stopTracing?.();
  });

  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
  const find = (spans: ReadableSpan[], name: string, kind: SpanKind) => {
    const found = spans.filter((s) => s.name === name && s.kind === kind);
    if (found.length !== 1) throw new Error(`expected one ${SpanKind[kind]} span '${name}', found ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
    return found[0];
  };

  it('links gateway, NATS hop, service, outbox relay, event log and webhook delivery, continuing the client trace', async () => {
    expect((await stack.api.post('/webhooks', { name: 'traced', url: receiver.url, event_types: ['contact.created'] })).status).toBe(201);
    exporter.reset();

    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const created = await stack.api.post('/contacts', { email: 'traced@example.com' }, { headers: { traceparent: `00-${clientTrace}-${clientSpan}-01` } });
    expect(created.status).toBe(201);

    const [delivery] = await receiver.waitFor(1, 'contact.created');
    const spans = await eventually(async () => {
      const all = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === clientTrace);
      return all.some((s) => s.name === 'webhook deliver') && all.some((s) => s.name === 'event-log contact.created') ? all : undefined;
    });

    const http = find(spans, 'POST /contacts', SpanKind.SERVER);
    const rpcClient = find(spans, 'rpc contacts.contacts.create', SpanKind.CLIENT);
    const rpcServer = find(spans, 'rpc contacts.contacts.create', SpanKind.SERVER);
    const publish = find(spans, 'publish contact.created', SpanKind.PRODUCER);
    const logged = find(spans, 'event-log contact.created', SpanKind.CONSUMER);
    const intake = find(spans, 'webhook-intake contact.created', SpanKind.CONSUMER);
    const deliver = find(spans, 'webhook deliver', SpanKind.CLIENT);

    expect(parentOf(http)).toBe(clientSpan);
    expect(parentOf(rpcClient)).toBe(http.spanContext().spanId);
    expect(parentOf(rpcServer)).toBe(rpcClient.spanContext().spanId);
    expect(parentOf(publish)).toBe(rpcServer.spanContext().spanId);
    expect(parentOf(logged)).toBe(publish.spanContext().spanId);
    expect(parentOf(intake)).toBe(publish.spanContext().spanId);
    expect(parentOf(deliver)).toBe(intake.spanContext().spanId);
    expect(http.attributes['http.response.status_code']).toBe(201);
    expect(http.attributes['http.route']).toBe('/contacts');
    expect(deliver.attributes['http.response.status_code']).toBe(200);

    // The receiver can join the trace too.
    expect(delivery.headers.traceparent).toBe(`00-${clientTrace}-${deliver.spanContext().spanId}-01`);
  });

  it('starts a new trace for a request without traceparent, and names it by the route template', async () => {
    exporter.reset();
    const contact = (await stack.api.post('/contacts', { email: 'untraced@example.com' })).body.data;
    await stack.api.get(`/contacts/${contact.id}`);
    const get = await eventually(async () => exporter.getFinishedSpans().find((s) => s.name === 'GET /contacts/:id'));
    expect(get.parentSpanContext).toBeUndefined();
    const server = exporter.getFinishedSpans().find((s) => s.name === 'rpc contacts.contacts.get' && s.kind === SpanKind.SERVER);
    expect(server?.spanContext().traceId).toBe(get.spanContext().traceId);
  });
});

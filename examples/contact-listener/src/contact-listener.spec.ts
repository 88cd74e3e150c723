import { DomainEvent } from '@crm/contracts';
import type { INestMicroservice } from '@nestjs/common';
import { eventually, startStack, TestStack } from '@crm/test-support';

/** The documented example consumer receives real contact.created events from a running stack. */
describe('example: a NestJS @EventPattern listener', () => {
  let stack: TestStack;
  let listener: INestMicroservice;
  const received: Array<{ event: DomainEvent<'contact.created'>; subject: string }> = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'] });
    process.env.CRM_NAMESPACE = stack.namespace;
    const { startContactListener } = await import('./contact-listener');
    listener = await startContactListener(stack.env.NATS_URL!, (event, subject) => void received.push({ event, subject }));
  });
  afterAll(async () => {
    delete process.env.CRM_NAMESPACE;
    await listener?.close();
    await stack.stop();
  });

  it('gets the whole event envelope for each contact created through the API', async () => {
    const email = `listener-${Date.now()}@example.com`;
    const created = await stack.api.post('/contacts', { email });
    expect(created.status).toBe(201);
    const got = await eventually(async () => received.find((r) => r.event.data.contact_id === created.body.data.id));
    expect(got.subject).toBe(`${stack.namespace}.events.contact.created`);
    expect(got.event).toMatchObject({ type: 'contact.created', data: { contact_id: created.body.data.id, email } });
    expect(got.event.id).toMatch(/^evt_/);
  });
});

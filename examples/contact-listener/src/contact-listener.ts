import { Module, Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { INestMicroservice } from '@nestjs/common';
import { Transport } from '@nestjs/microservices';
import { ContactCreatedHandler, ContactListenerController, NAMESPACE, ON_CONTACT_CREATED } from './contact-listener.controller';
import { DomainEventDeserializer } from './domain-event.deserializer';

/**
 * A plain NestJS microservice that follows `<namespace>.events.contact.created` over core NATS. Replicas
 * share one queue group, so each event is handled once per deployment of this listener.
 */
export async function startContactListener(natsUrl: string, onContactCreated: ContactCreatedHandler): Promise<INestMicroservice> {
  const handler: Provider = { provide: ON_CONTACT_CREATED, useValue: onContactCreated };

  @Module({ controllers: [ContactListenerController], providers: [handler] })
  class ContactListenerModule {}

  const app = await NestFactory.createMicroservice(ContactListenerModule, {
    transport: Transport.NATS,
    options: { servers: [natsUrl], queue: `${NAMESPACE}.contact-listener`, deserializer: new DomainEventDeserializer() },
    logger: ['error', 'warn'],
  });
  await app.listen();
  return app;
}

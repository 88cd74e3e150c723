import { DomainEvent, eventSubject, EventType } from '@crm/contracts';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, NatsContext, Payload } from '@nestjs/microservices';

/** The deployment whose events we follow; the subject is fixed when the class is defined. */
export const NAMESPACE = process.env.CRM_NAMESPACE ?? 'crm';

export const ON_CONTACT_CREATED = Symbol('ON_CONTACT_CREATED');
export type ContactCreatedHandler = (event: DomainEvent<typeof EventType.ContactCreated>, subject: string) => Promise<void> | void;

@Controller()
export class ContactListenerController {
  constructor(@Inject(ON_CONTACT_CREATED) private readonly handle: ContactCreatedHandler) {}

  @EventPattern(eventSubject(NAMESPACE, EventType.ContactCreated))
  async contactCreated(@Payload() event: DomainEvent<typeof EventType.ContactCreated>, @Ctx() context: NatsContext): Promise<void> {
    await this.handle(event, context.getSubject());
  }
}

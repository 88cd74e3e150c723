import { ConsumerDeserializer, IncomingEvent } from '@nestjs/microservices';

/**
 * Our events are plain JSON envelopes (`{id, type, occurred_at, actor, via, request_id, data}`), not Nest's `{pattern, data}`
 * packets; without this, Nest would hand the handler only the envelope's `data` field.
 */
export class DomainEventDeserializer implements ConsumerDeserializer {
  deserialize(value: Uint8Array, options?: { channel?: string }): IncomingEvent {
    return { pattern: options?.channel ?? '', data: JSON.parse(Buffer.from(value).toString('utf8')) };
  }
}

import { CHANGE_VIAS, ChangeActorView, EVENT_CATALOG, EventType } from '@crm/contracts';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, getSchemaPath, SwaggerModule } from '@nestjs/swagger';
import { API_VERSION, toOpenApi31 } from './openapi-document';

@Module({})
class EventSchemasModule {}

const camel = (type: string) => type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase());

/**
 * The AsyncAPI 3.0 document of the domain events on NATS: one channel per event type
 * (`<namespace>.events.<type>`), each message the JSON envelope with that type's `data`. The payload
 * schemas come from the same classes the services write (EVENT_CATALOG), through @nestjs/swagger.
 * A running gateway passes its own app, whose routes are left out (only the empty EventSchemasModule
 * is scanned); offline, an empty preview app is made for it (which silences Nest's global logger).
 */
export async function createAsyncApiDocument(running?: INestApplication): Promise<Record<string, unknown>> {
  const models = [ChangeActorView, ...new Set(Object.values(EVENT_CATALOG).flatMap((e) => (e.data ? [e.data] : [])))];
  const app = running ?? (await NestFactory.create(EventSchemasModule, { preview: true, logger: false, abortOnError: false }));
  let schemas: Record<string, Record<string, unknown>>;
  try {
    const holder = SwaggerModule.createDocument(app, new DocumentBuilder().build(), { extraModels: models, include: [EventSchemasModule] });
    schemas = toOpenApi31(holder.components?.schemas ?? {}) as Record<string, Record<string, unknown>>;
  } finally {
    if (!running) await app.close();
  }
  // Payloads name every field they carry; a consumer may rely on that.
  for (const schema of Object.values(schemas)) if (schema.type === 'object' && schema.additionalProperties === undefined) schema.additionalProperties = false;

  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  for (const [type, { summary, data }] of Object.entries(EVENT_CATALOG) as Array<[EventType, (typeof EVENT_CATALOG)[EventType]]>) {
    const name = camel(type);
    messages[name] = {
      name: type,
      summary,
      contentType: 'application/json',
      headers: {
        type: 'object',
        properties: { 'Nats-Msg-Id': { type: 'string', description: 'The event id; JetStream de-duplicates on it.' } },
      },
      payload: {
        type: 'object',
        required: ['id', 'type', 'occurred_at', 'actor', 'via', 'request_id', 'data'],
        properties: {
          id: { type: 'string', description: 'evt_ followed by a ULID; unique, and the order of the log.' },
          type: { type: 'string', const: type },
          occurred_at: { type: 'string', format: 'date-time' },
          actor: {
            allOf: [{ $ref: getSchemaPath(ChangeActorView.name) }],
            description: 'Who made the change: the API key, the team member the key belongs to, or the system (`id` then names the part that acted).',
          },
          via: { type: 'string', enum: [...CHANGE_VIAS], description: 'The channel the change came through.' },
          request_id: {
            type: ['string', 'null'],
            description: 'The X-Request-Id of the request that made the change; null for what the system did on its own.',
          },
          data: data ? { $ref: getSchemaPath(data.name) } : { type: 'object' },
        },
        additionalProperties: false,
      },
    };
    channels[name] = {
      address: `{namespace}.events.${type}`,
      summary,
      parameters: { namespace: { $ref: '#/components/parameters/namespace' } },
      messages: { [name]: { $ref: `#/components/messages/${name}` } },
    };
    operations[`publish${name.replace(/^./, (c) => c.toUpperCase())}`] = {
      action: 'send',
      channel: { $ref: `#/channels/${name}` },
      messages: [{ $ref: `#/channels/${name}/messages/${name}` }],
    };
  }

  return {
    asyncapi: '3.0.0',
    info: {
      title: 'CRM domain events',
      version: API_VERSION,
      description:
        'Every committed change, published once through the transactional outbox to the JetStream stream `<NAMESPACE>_EVENTS` ' +
        '(file storage, kept 7 days, 2-minute duplicate window). Delivery is at least once: de-duplicate on `id`. See docs/events.md. ' +
        'Webhook subscriptions (`filter` on POST /webhooks) and the log (`filter` on GET /events, POST /events/query) filter events with the query language ' +
        'over `type`, `actor.type`, `actor.id`, `via`, `request_id` and `data.<path>`: a data path must be one of the payloads below, and under ' +
        "`data.previous` and `data.current` of an update a field of the event's object.",
      license: { name: 'MIT', url: 'https://opensource.org/license/mit' },
    },
    defaultContentType: 'application/json',
    servers: { local: { host: '127.0.0.1:4222', protocol: 'nats', description: 'NATS with JetStream, as `npm start` expects it' } },
    channels,
    operations,
    components: {
      parameters: { namespace: { default: 'crm', description: 'The deployment namespace (CRM_NAMESPACE).' } },
      messages,
      schemas,
    },
  };
}

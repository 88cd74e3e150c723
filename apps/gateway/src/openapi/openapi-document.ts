import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, getSchemaPath, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { PUBLIC_PATHS } from '../http/access.hook';
import { BODY_EXTENSION, QUERY_EXTENSION } from './api-docs.decorators';
import { ErrorView } from './error.view';
import { AGGREGATE_EXAMPLE, AGGREGATE_PROPERTIES, AGGREGATE_SCHEMAS, QUERY_EXPRESSION_SCHEMAS } from '@crm/contracts';

/** The release this document describes; kept equal to package.json's version (a test checks). */
export const API_VERSION = '0.1.0';

type Schema = Record<string, unknown>;
type Operation = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/** Statuses any authenticated operation may answer, with what each means there. */
const COMMON_ERRORS: Record<number, string> = {
  400: 'The request is malformed or a field, query parameter or cursor is invalid (`invalid_request`, `validation_failed`).',
  401: 'The API key is missing, unknown, revoked or expired (`unauthorized`).',
  403: "The key's scope does not allow this operation (`forbidden`).",
  429: 'The rate limit is spent (`rate_limit_exceeded`); `Retry-After` says when to come back.',
  500: 'An unexpected failure (`internal_error`); nothing the client did.',
  501: 'The service owning the operation does not offer it yet, e.g. during a rolling update (`not_implemented`).',
  503: 'The owning service or its store is unavailable (`service_unavailable`); retry after `Retry-After` seconds.',
};
const NOT_FOUND = 'No resource with that id (`not_found`).';
const WRITE_ERRORS: Record<number, string> = {
  409: 'The write conflicts with the current state (`conflict`), or a request with the same Idempotency-Key is still in flight.',
  422: 'The Idempotency-Key was already used with a different request (`idempotency_key_reused`).',
};
const BODY_ERRORS: Record<number, string> = {
  413: 'The body is larger than the limit (`payload_too_large`).',
  415: 'The body is not `application/json` (`unsupported_media_type`).',
};

const HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests per minute this key may make.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when the bucket is full again.', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'The id of this request in our logs (yours, if you sent a well-formed one).', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** Every answer to a keyed request carries the rate-limit state and the request id; 429 and 503 say when to retry. */
function sharedHeaders(status: string): Record<string, object> {
  const names: Array<keyof typeof HEADERS> = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'];
  if (status === '429' || status === '503') names.push('Retry-After');
  return Object.fromEntries(names.map((name) => [name, headerRef(name)]));
}

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the gateway's controllers (routes, statuses,
 * response views) and from the request classes' class-validator rules (bodies, query parameters), then
 * completed with what every route shares: path parameters, the key, rate-limit headers and errors.
 */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('CRM API')
    .setVersion(API_VERSION)
    .setDescription(
      'Contacts, companies, activities, tasks, deals in pipelines, custom objects, an ordered event log and signed webhooks. ' +
        'Authenticate with the `X-Api-Key` header, or, where the deployment configures an identity provider, with `Authorization: Bearer <JWT>` (docs/api.md, "Bearer tokens"). ' +
        'Lists are cursor-paginated; errors are `{error: {code, message, details?}}`.',
    )
    .setLicense('MIT', 'https://opensource.org/license/mit')
    .addServer('/', 'The gateway this document was read from')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }, 'ApiKey')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          "An access token of the deployment's identity provider (AUTH_JWT_ISSUER), for audience AUTH_JWT_AUDIENCE; its permissions are its scope claim's (or AUTH_JWT_PERMISSIONS_CLAIM's). Only where bearer tokens are configured.",
      },
      'BearerToken',
    )
    // Two requirements, not one with both: either credential alone authenticates a request.
    .addSecurityRequirements('ApiKey')
    .addSecurityRequirements('BearerToken')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    extraModels: [ErrorView],
    operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '').replace(/^./, (c) => c.toLowerCase())}_${method}`,
  });
  return completeDocument(document);
}

export function completeDocument(document: OpenAPIObject): OpenAPIObject {
  const requestSchemas = requestClassSchemas();
  const schemas = document.components!.schemas as Record<string, Schema>;
  for (const schema of Object.values(schemas)) closeObjects(schema);
  const used = new Set<string>();

  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation | undefined>)[method];
      if (!operation) continue;
      const isPublic = PUBLIC_PATHS.has(path);
      const declared = new Set(((operation.parameters ?? []) as Array<{ name: string; in: string }>).map((p) => `${p.in}:${p.name}`));
      operation.parameters = [...pathParameters(path).filter((p) => !declared.has(`path:${p.name}`)), ...(operation.parameters ?? [])];

      const bodyClass = operation[BODY_EXTENSION] as string | undefined;
      if (bodyClass) {
        // A class that only inherits its rules has no schema of its own: name the class that declares them.
        if (!requestSchemas[bodyClass]) throw new Error(`No validation rules for ${bodyClass}`);
        used.add(bodyClass);
        operation.requestBody = { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${bodyClass}` } } } };
        delete operation[BODY_EXTENSION];
      }
      const queryClass = operation[QUERY_EXTENSION] as string | undefined;
      if (queryClass) {
        operation.parameters.push(...queryParameters(requestSchemas, queryClass));
        delete operation[QUERY_EXTENSION];
      }
      if (isPublic) {
        operation.security = [];
        continue;
      }
      if (WRITES.has(method)) {
        operation.parameters.push({
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Makes a retry safe: the first outcome is replayed for 24 hours (see docs/api.md).',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        });
      }
      const errors = {
        ...COMMON_ERRORS,
        ...(/\{/.test(path) ? { 404: NOT_FOUND } : {}),
        ...(WRITES.has(method) ? WRITE_ERRORS : {}),
        ...(operation.requestBody ? BODY_ERRORS : {}),
      };
      for (const status of Object.keys(errors)) operation.responses[status] ??= { $ref: `#/components/responses/Error${status}` };
      for (const [status, response] of Object.entries(operation.responses as Record<string, { $ref?: string; content?: object; headers?: object }>)) {
        if (response.$ref) continue;
        if (/^[45]/.test(status)) response.content ??= { 'application/json': { schema: { $ref: getSchemaPath(ErrorView) } } };
        const replayed = WRITES.has(method) && status.startsWith('2') ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {};
        response.headers = { ...sharedHeaders(status), ...replayed, ...response.headers };
      }
    }
  }

  document.components!.headers = HEADERS;
  document.components!.responses = Object.fromEntries(
    Object.entries({ ...COMMON_ERRORS, 404: NOT_FOUND, ...WRITE_ERRORS, ...BODY_ERRORS }).map(([status, description]) => [
      `Error${status}`,
      { description, headers: sharedHeaders(status), content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorView) } } } },
    ]),
  );
  for (const name of reachable(requestSchemas, used)) schemas[name] = requestSchemas[name];
  // A query's filter is recursive, which class-validator rules cannot say: its schema is written out once.
  if (schemas.RecordQueryDto) {
    Object.assign(schemas, QUERY_EXPRESSION_SCHEMAS);
    (schemas.RecordQueryDto.properties as Record<string, Schema>).filter = { $ref: '#/components/schemas/QueryExpression' };
  }
  // Event filters (docs/events.md) are the same expression, over an event's paths; null removes a webhook's.
  for (const [name, nullable] of [
    ['EventQueryDto', false],
    ['CreateWebhookDto', true],
    ['UpdateWebhookDto', true],
  ] as const) {
    const properties = schemas[name]?.properties as Record<string, Schema> | undefined;
    if (!properties?.filter) continue;
    Object.assign(schemas, QUERY_EXPRESSION_SCHEMAS);
    const expression = { $ref: '#/components/schemas/QueryExpression' };
    properties.filter = nullable ? { oneOf: [expression, { type: 'null' }] } : expression;
  }
  // An aggregation's dimensions, metrics and sort keys are each one of several shapes: written out too.
  if (schemas.AggregateDto) {
    Object.assign(schemas, QUERY_EXPRESSION_SCHEMAS, AGGREGATE_SCHEMAS);
    Object.assign(schemas.AggregateDto.properties as Record<string, Schema>, AGGREGATE_PROPERTIES, {
      filter: { $ref: '#/components/schemas/QueryExpression' },
    });
    schemas.AggregateDto.example = AGGREGATE_EXAMPLE;
  }
  return toOpenApi31(document) as OpenAPIObject;
}

function pathParameters(path: string): Array<{ name: string }> {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string', maxLength: 255 } }));
}

function queryParameters(schemas: Record<string, Schema>, name: string): object[] {
  const schema = schemas[name];
  if (!schema) throw new Error(`No validation rules for ${name}`);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  // A query string has no null: an optional parameter is one left out.
  return Object.entries((schema.properties as Record<string, Schema>) ?? {}).map(([property, { nullable: _absentNotNull, ...propertySchema }]) => ({
    name: property,
    in: 'query',
    required: required.has(property),
    schema: propertySchema,
  }));
}

/**
 * The request classes' schemas, read from their class-validator decorators: the rules the services
 * enforce. A field marked @IsOptional also accepts null (on update, null clears it). Rules the
 * generator cannot express (free-form objects, custom checks) leave the field open; the service still
 * checks them and answers 400 naming the field.
 */
function requestClassSchemas(): Record<string, Schema> {
  const generated = validationMetadatasToSchemas({
    refPointerPrefix: '#/components/schemas/',
    additionalConverters: {
      conditionalValidation: (meta) => (meta.name === 'isOptional' ? { nullable: true } : {}),
      isRFC3339: { type: 'string', format: 'date-time' },
      isMetadata: { type: 'object', additionalProperties: true },
      isCustomFieldValues: { type: 'object', additionalProperties: true },
      isCurrencyCode: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    },
  }) as Record<string, Schema>;
  const known = new Set(Object.keys(generated));
  const fix = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(fix);
    if (!value || typeof value !== 'object') return value;
    const ref = (value as { $ref?: string }).$ref;
    if (typeof ref === 'string' && !known.has(ref.replace('#/components/schemas/', ''))) {
      const { $ref: _unresolved, ...rest } = value as Schema;
      return fix(rest);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fix(item)]));
  };
  const result: Record<string, Schema> = {};
  for (const [name, schema] of Object.entries(generated)) {
    result[name] = fix(schema) as Schema;
    // The services reject fields they do not know (`unknown_field`).
    if (result[name].type === 'object' && result[name].additionalProperties === undefined) result[name].additionalProperties = false;
  }
  return result;
}

function reachable(schemas: Record<string, Schema>, roots: Set<string>): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !schemas[name]) return;
    seen.add(name);
    for (const match of JSON.stringify(schemas[name]).matchAll(/#\/components\/schemas\/(\w+)/g)) visit(match[1]);
  };
  roots.forEach(visit);
  return seen;
}

/** Response views list every field they have: a field the document does not name is a bug, not an extension. */
function closeObjects(schema: Schema): void {
  if (schema.type === 'object' && schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
}

/** Swagger's `nullable: true` (OpenAPI 3.0) to 3.1's JSON Schema: `null` among the types, or `anyOf` with null. */
export function toOpenApi31(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toOpenApi31);
  if (!value || typeof value !== 'object') return value;
  const converted = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toOpenApi31(item)])) as Schema;
  if (converted.nullable !== true) {
    if (converted.nullable === false) delete converted.nullable;
    return converted;
  }
  delete converted.nullable;
  if (Array.isArray(converted.enum)) converted.enum = [...converted.enum, null];
  if (typeof converted.type === 'string' && converted.type !== 'object') return { ...converted, type: [converted.type, 'null'] };
  if (converted.allOf || converted.$ref) {
    const { allOf, $ref, type: _type, ...rest } = converted;
    const target = $ref ? { $ref } : (allOf as Schema[]).length === 1 ? (allOf as Schema[])[0] : { allOf };
    return { ...rest, anyOf: [target, { type: 'null' }] };
  }
  if (converted.type === 'object') return { ...converted, type: ['object', 'null'] };
  if (converted.type === undefined && !converted.enum) return converted;
  return converted.enum ? converted : { anyOf: [converted, { type: 'null' }] };
}

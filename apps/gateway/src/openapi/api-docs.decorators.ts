import { RelatedSummary, ValidationWarning } from '@crm/contracts';
import { applyDecorators, Type } from '@nestjs/common';
import { ApiBody, ApiExtension, ApiExtraModels, ApiNoContentResponse, ApiOperation, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorView } from './error.view';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * OpenAPI descriptions of the gateway's routes. The gateway forwards raw requests, so the request
 * classes are named here (by the extensions below) and the document builder turns them into schemas
 * from the same class-validator rules the owning service validates with.
 */
export const BODY_EXTENSION = 'x-crm-body';
export const QUERY_EXTENSION = 'x-crm-query';

interface Describe {
  summary: string;
  /** Set where the controller's class and method names would not give it (`<group>_<key>` of the operation table). */
  operationId?: string;
  /** The request class of the body (a class-validator DTO from @crm/contracts). */
  body?: Type<unknown>;
  /** The request class of the query string. */
  query?: Type<unknown>;
}

interface Reply {
  /** `included`: summaries of the records the resource points to. */
  included?: boolean;
  /** `warnings`: what a write accepted although it broke a soft-enforced field definition. */
  warnings?: boolean;
  /** `secret`: a webhook's signing secret, beside `data` and only in the answer that created it. */
  secret?: boolean;
}

function requestOf({ summary, operationId, body, query }: Describe) {
  return [
    ApiOperation({ summary, ...(operationId ? { operationId } : {}) }),
    ...(body ? [ApiExtension(BODY_EXTENSION, body.name)] : []),
    ...(query ? [ApiExtension(QUERY_EXTENSION, query.name)] : []),
  ];
}

function wrapped(view: Type<unknown>, reply: Reply = {}) {
  const properties: Record<string, object> = { data: { $ref: getSchemaPath(view) } };
  const required = ['data'];
  if (reply.included) {
    properties.included = { type: 'array', items: { $ref: getSchemaPath(RelatedSummary) } };
    required.push('included');
  }
  if (reply.warnings) properties.warnings = { type: 'array', items: { $ref: getSchemaPath(ValidationWarning) } };
  if (reply.secret) {
    properties.secret = { type: 'string', description: 'The signing secret (`whsec_…`). Store it now: it is never shown again.' };
    required.push('secret');
  }
  return { type: 'object', required, properties, additionalProperties: false };
}

/** One resource: `{data}` (with `included` or `warnings` where the route adds them). */
export function ApiResource(status: number, view: Type<unknown>, describe: Describe, reply: Reply = {}) {
  return applyDecorators(
    ...requestOf(describe),
    ApiExtraModels(view, RelatedSummary, ValidationWarning),
    ApiResponse({ status, schema: wrapped(view, reply) }),
  );
}

/** A route that answers 200 with `schema`, which refers to `models`. */
function answers200(describe: Describe, models: Array<Type<unknown>>, schema: SchemaObject) {
  return applyDecorators(...requestOf(describe), ApiExtraModels(...models), ApiResponse({ status: 200, schema }));
}

/**
 * A page: `{data: [...], has_more, next_cursor}`; `next_cursor` only when `has_more` is true. A projected
 * page (a query's answer) holds the view, or `{id, ...}` with the paths the request named in `fields`.
 */
export function ApiPage(view: Type<unknown>, describe: Describe, projected = false, meta?: Type<unknown>) {
  const item = projected
    ? { anyOf: [{ $ref: getSchemaPath(view) }, { type: 'object', required: ['id'], properties: { id: { type: 'string' } }, additionalProperties: true }] }
    : { $ref: getSchemaPath(view) };
  return answers200(describe, meta ? [view, meta] : [view], {
    type: 'object',
    required: ['data', 'has_more'],
    properties: {
      data: { type: 'array', items: item },
      has_more: { type: 'boolean' },
      next_cursor: { type: 'string', description: 'Opaque; send it as `cursor` for the next page.' },
      ...(meta ? { meta: { $ref: getSchemaPath(meta) } } : {}),
    },
    additionalProperties: false,
  });
}

/**
 * A batch write: `{data: [{index, status, data?, error?, warnings?}]}`, one result per item in input
 * order. `data` is the record as the single write answers it (`created` for a create, where that differs).
 */
export function ApiBatch(view: Type<unknown>, describe: Describe, created?: Type<unknown>) {
  const record = created ? { anyOf: [{ $ref: getSchemaPath(view) }, { $ref: getSchemaPath(created) }] } : { $ref: getSchemaPath(view) };
  const error = {
    type: 'object',
    required: ['code', 'message'],
    properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'array', items: { type: 'object', additionalProperties: true } } },
  };
  const item = {
    type: 'object',
    required: ['index', 'status'],
    properties: {
      index: { type: 'integer', description: 'The position of the item in `items`.' },
      status: { type: 'integer', description: 'What the single write would have answered: 201, 200, 204 or the 4xx of its error.' },
      data: record,
      error,
      warnings: { type: 'array', items: { $ref: getSchemaPath(ValidationWarning) } },
    },
    additionalProperties: false,
  };
  return answers200(describe, [view, ValidationWarning, ...(created ? [created] : [])], {
    type: 'object',
    required: ['data'],
    properties: { data: { type: 'array', items: item } },
    additionalProperties: false,
  });
}

/** An aggregation (docs/aggregate.md): a page of groups, the totals over every matched record, and the cursor of the next page. */
export function ApiAggregate(view: Type<unknown>, describe: Describe) {
  const metrics = { type: 'object' as const, additionalProperties: { anyOf: [{ type: 'number' as const, nullable: true }, { type: 'string' as const }] } };
  return answers200(describe, [view], {
    type: 'object',
    required: ['data', 'totals', 'has_more', 'next_cursor'],
    properties: {
      data: { type: 'array', items: { $ref: getSchemaPath(view) } },
      totals: { ...metrics, description: 'The metrics over every record the filter matches, whatever the page.' },
      has_more: { type: 'boolean' },
      next_cursor: { type: 'string', nullable: true, description: 'Opaque; send it as `cursor` for the next page of groups.' },
    },
    additionalProperties: false,
    example: {
      data: [{ group: { 'stage.name': 'Proposal', expected_close: '2026-12-01T00:00:00.000+01:00' }, metrics: { deals: 12, pipeline: 1200000, p90: 250000 } }],
      totals: { deals: 40, pipeline: 4000000, p90: 310000 },
      has_more: false,
      next_cursor: null,
    },
  });
}

/** A delete or other write that answers 204 with no body. */
export function ApiNoContent(describe: Describe) {
  return applyDecorators(...requestOf(describe), ApiNoContentResponse({ description: 'Done; no body.' }));
}

/** A file streamed as it is read (an export's): 200 with the whole file, 206 with the part a `Range` asked for. */
export function ApiFile(describe: Describe, contentTypes: readonly string[]) {
  const content = Object.fromEntries(contentTypes.map((type) => [type, { schema: { type: 'string', format: 'binary' } }]));
  return applyDecorators(
    ...requestOf(describe),
    ApiResponse({ status: 200, description: 'The whole file.', content }),
    ApiResponse({ status: 206, description: 'The bytes the Range asked for (Content-Range says which).', content }),
  );
}

/** The Model Context Protocol endpoint: JSON-RPC 2.0 messages in and out (docs/mcp.md). */
export function ApiMcp() {
  const jsonRpc = { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { type: 'string', enum: ['2.0'] } }, additionalProperties: true };
  return applyDecorators(
    ApiOperation({ summary: 'Model Context Protocol (Streamable HTTP, stateless): tools over this API for software agents' }),
    ApiBody({ description: 'One JSON-RPC message; a batch (an array) is refused.', schema: jsonRpc }),
    ApiResponse({ status: 200, description: 'The JSON-RPC response', content: { 'application/json': { schema: jsonRpc } } }),
    ApiResponse({ status: 202, description: 'Accepted: the message was a notification or a response; no body.' }),
    ApiResponse({
      status: 400,
      description:
        'A JSON-RPC error (`-32600` for a batch, `-32700` for a message that is not JSON-RPC), or in the API error shape a body that is not JSON or breaks the input limits.',
      content: { 'application/json': { schema: { anyOf: [jsonRpc, { $ref: getSchemaPath(ErrorView) }] } } },
    }),
  );
}

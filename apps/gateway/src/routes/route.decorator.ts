import { AnyOperation, EXPORT_FILE_TYPES, HttpMethod, Ops, repliesWithSecret } from '@crm/contracts';
import { applyDecorators, Delete, Get, HttpCode, Patch, Post, Put } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { Permission, Scopes } from '../http/scopes';
import { RepliesWithSecret } from '../idempotency/secret-reply';
import { ApiAggregate, ApiBatch, ApiFile, ApiNoContent, ApiPage, ApiResource } from '../openapi/api-docs.decorators';

const METHODS: Record<HttpMethod, (path: string) => MethodDecorator> = { GET: Get, POST: Post, PUT: Put, PATCH: Patch, DELETE: Delete };

/** `contacts_create` for `Ops.contacts.create`: the OpenAPI operation id, whichever controller serves the route. */
const OPERATION_IDS = new Map<AnyOperation, string>(
  Object.entries(Ops).flatMap(([group, operations]) =>
    Object.entries(operations as Record<string, AnyOperation>).map(([key, op]) => [op, `${group}_${key}`] as const),
  ),
);

/** The OpenAPI description of an operation's request and answer. */
function documented(op: AnyOperation) {
  const http = op.http!;
  const describe = { summary: http.summary, operationId: OPERATION_IDS.get(op), body: op.body as never, query: op.query as never };
  const { reply } = op;
  const answer =
    reply.kind === 'page'
      ? ApiPage(reply.view as never, describe, reply.projected, reply.meta as never)
      : reply.kind === 'resource'
        ? ApiResource(http.status, reply.view as never, describe, { included: reply.included, warnings: reply.warnings, secret: reply.secret })
        : reply.kind === 'batch'
          ? ApiBatch(reply.view as never, describe, reply.created as never)
          : reply.kind === 'aggregate'
            ? ApiAggregate(reply.view as never, describe)
            : http.status === 200
              ? ApiFile(describe, Object.values(EXPORT_FILE_TYPES))
              : ApiNoContent(describe);
  const errors = Object.entries(http.errors ?? {}).map(([status, description]) => ApiResponse({ status: Number(status), description }));
  return [answer, ...errors];
}

/**
 * Makes a gateway method the HTTP route of an operation, all read from its entry in the operation table:
 * method and path, the scope the caller's key needs, the success status, the OpenAPI description, and
 * whether its answer carries a one-time secret.
 */
export function Route(op: AnyOperation) {
  const http = op.http;
  if (!http) throw new Error(`${op.name} has no HTTP route`);
  const secret = repliesWithSecret(op) ? [RepliesWithSecret()] : [];
  return applyDecorators(
    METHODS[http.method](http.path.slice(1)),
    Scopes(http.access),
    Permission(http.permission),
    HttpCode(http.status),
    ...secret,
    ...documented(op),
  );
}

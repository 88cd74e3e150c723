import { PageQuery } from '../paging';
import { RpcServiceName } from '../subjects';
import { RecordQueryDto } from '../query/record-query.dto';
import { BatchLimits, BatchWriteDto } from '../batch/batch';
import { UpdateAssociationDto } from '../associations/associations';
import { ChangeSlice, ChangeSliceRequest, ChangeView, RecordChangesQuery } from '../changes/changes';
import { batchResults, internal, noContent, page, projectedPage, readingPost, resource, route } from './operation';

/**
 * `POST /<object>/query` (docs/query.md): a read, sent as POST because a filter tree does not fit a URL;
 * its items are the list view, or `id` and the paths the request names in `fields`.
 */
export const queryRoute = <V, Path extends string, Svc extends RpcServiceName>(
  service: Svc,
  name: `${Svc}.${string}`,
  path: Path,
  view: abstract new (...args: never[]) => V,
  many: string,
) =>
  readingPost({
    service,
    name,
    path,
    summary: `Query ${many}: a filter over any field, sort, fields and keyset paging`,
    body: RecordQueryDto,
    reply: projectedPage(view),
  });

/**
 * `POST /<object>/batch` (docs/batch.md): create, update, upsert or delete up to 200 records in one
 * request, each item answered as its single write would be.
 */
export const batchRoute = <V, C, Path extends string, Svc extends RpcServiceName>(
  service: Svc,
  name: `${Svc}.${string}`,
  path: Path,
  many: string,
  view: abstract new (...args: never[]) => V,
  created?: abstract new (...args: never[]) => C,
) =>
  route({
    service,
    name,
    method: 'POST',
    path,
    status: 200,
    summary: `Create, update, upsert or delete up to ${BatchLimits.items} ${many} in one request`,
    access: 'write',
    body: BatchWriteDto,
    reply: batchResults(view, created),
    errors: { 400: 'The batch itself is malformed, or with all_or_none an item failed: details name each failing item as items.<index>.<field>.' },
    via: 'batch',
  });

/**
 * `GET /<object>/:id/changes` (docs/changes.md): one record's change history, oldest first. It answers
 * for a deleted record whose history is kept; 404 only for a record that has neither.
 */
export const changesRoute = <Path extends string, Svc extends RpcServiceName>(service: Svc, name: `${Svc}.${string}`, path: Path, one: string) =>
  route({
    service,
    name,
    method: 'GET',
    path,
    summary: `List the changes of ${one}, oldest first: who changed which fields, from what, through which channel`,
    access: 'read',
    // Entries name other records by id only.
    reads: [],
    query: RecordChangesQuery,
    reply: page(ChangeView),
    errors: { 404: 'No such record, and no history of one (`not_found`).' },
  });

/** The part of GET /changes one service answers: its own entries after an id, oldest first. */
export const changeSlice = (service: 'deals') => internal<ChangeSliceRequest, ChangeSlice>({ service, name: `${service}.changes.slice`, idempotent: true });

/**
 * The four routes of one association type (docs/associations.md): add, list, change and remove the
 * `target`s of an `owner`, which the MCP association tools run.
 */
export const associationRoutes = <V, I, B, OwnerPath extends string, Param extends string, Svc extends RpcServiceName>(spec: {
  service: Svc;
  name: `${Svc}.${string}`;
  owner: OwnerPath;
  param: Param;
  nouns: { owner: string; target: string; targets: string; field: string };
  body: abstract new (...args: never[]) => B;
  view: abstract new (...args: never[]) => V;
  item: abstract new (...args: never[]) => I;
}) => {
  const { owner, target, targets, field } = spec.nouns;
  const one = `${spec.owner}/${targets}` as const;
  const each = `${spec.owner}/${targets}/:${spec.param}` as `${OwnerPath}/${string}/:${Param}`;
  const notAssociated = { 404: `No such ${owner}, or the ${target} is not associated with it (\`not_found\`).` };
  return {
    add: route({
      service: spec.service,
      name: `${spec.name}.add`,
      method: 'POST',
      path: one,
      summary: `Associate a ${target} with a ${owner}, with an optional role`,
      access: 'write',
      body: spec.body,
      reply: resource(spec.view),
      errors: {
        404: `No such ${owner}, or no ${target} with that ${field} (\`not_found\`, details name the field).`,
        409: `The ${target} is already associated with the ${owner} (\`conflict\`).`,
      },
    }),
    list: route({
      service: spec.service,
      name: `${spec.name}.list`,
      method: 'GET',
      path: one,
      summary: `List a ${owner}'s ${targets} with their roles`,
      access: 'read',
      query: PageQuery,
      reply: page(spec.item),
    }),
    update: route({
      service: spec.service,
      name: `${spec.name}.update`,
      method: 'PATCH',
      path: each,
      summary: `Change a ${target} association's role, or make it primary`,
      access: 'write',
      body: UpdateAssociationDto,
      reply: resource(spec.view),
      errors: notAssociated,
    }),
    remove: route({
      service: spec.service,
      name: `${spec.name}.remove`,
      method: 'DELETE',
      path: each,
      summary: `Remove a ${target} association from a ${owner}`,
      access: 'write',
      reply: noContent,
      errors: notAssociated,
    }),
  };
};

/**
 * The routes every record object has (create, list, query, batch, get, update, delete, changes) at
 * `/<slug>`, answered by the service that keeps it; its aggregate is in aggregate.ops.ts.
 */
export const recordRoutes = <V, C, U, L, Svc extends RpcServiceName, Slug extends string>(
  service: Svc,
  slug: Slug,
  [one, many]: [string, string],
  view: abstract new (...args: never[]) => V,
  classes: { create: abstract new (...args: never[]) => C; update: abstract new (...args: never[]) => U; list: abstract new (...args: never[]) => L },
  createSummary: string,
) => ({
  create: route({
    service,
    name: `${service}.${slug}.create`,
    method: 'POST',
    path: `/${slug}`,
    summary: createSummary,
    access: 'write',
    body: classes.create,
    reply: resource(view, { warnings: true }),
  }),
  list: route({
    service,
    name: `${service}.${slug}.list`,
    method: 'GET',
    path: `/${slug}`,
    summary: `List ${many}`,
    access: 'read',
    query: classes.list,
    reply: page(view),
  }),
  query: queryRoute(service, `${service}.${slug}.query`, `/${slug}/query`, view, many),
  batch: batchRoute(service, `${service}.${slug}.batch`, `/${slug}/batch`, many, view),
  get: route({
    service,
    name: `${service}.${slug}.get`,
    method: 'GET',
    path: `/${slug}/:id` as const,
    summary: `Get ${one}`,
    access: 'read',
    reply: resource(view),
  }),
  update: route({
    service,
    name: `${service}.${slug}.update`,
    method: 'PATCH',
    path: `/${slug}/:id` as const,
    summary: `Update ${one}`,
    access: 'write',
    body: classes.update,
    reply: resource(view, { warnings: true }),
  }),
  remove: route({
    service,
    name: `${service}.${slug}.delete`,
    method: 'DELETE',
    path: `/${slug}/:id` as const,
    summary: `Delete ${one}`,
    access: 'write',
    reply: noContent,
  }),
  changes: changesRoute(service, `${service}.${slug}.changes`, `/${slug}/:id/changes` as const, one),
});

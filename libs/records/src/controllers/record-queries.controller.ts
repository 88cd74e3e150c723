import {
  AggregateDto,
  DomainError,
  ExportPageRequest,
  ObjectService,
  Ops,
  QueryFieldsRequest,
  RecordQueryDto,
  RemoteMatchRequest,
  RemoteValuesRequest,
  RequestContext,
  SlugKeptBy,
  SlugWith,
  slugsWith,
} from '@crm/contracts';
import { handleEach, Handles } from '@crm/runtime';
import { Controller, Inject, Type } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { namesCustomFields } from '../query/aggregate-plan';
import { CatalogQueries } from '../query/catalog-queries';
import { QueryCatalog } from '../query/query-catalog';

/** The queryable objects service `S` keeps: each has `POST /<slug>/query` and `POST /<slug>/aggregate`. */
export type QueryableBy<S extends ObjectService> = SlugWith<'queryable'> & SlugKeptBy<S>;

/**
 * What a query over each object of a service may name. `of` answers for every queryable object the
 * service keeps (a typed record of them, so a new one without a catalog does not compile); `described`
 * for any object a describe names (the service's custom objects too), refusing one it does not keep;
 * `related` for the objects other services' queries reach one hop away.
 */
export abstract class RecordCatalogs<S extends ObjectService> {
  abstract of(object: QueryableBy<S>, withCustomFields?: boolean): Promise<QueryCatalog>;
  abstract described(object: string): Promise<QueryCatalog>;
  abstract related(object: string, prefix: string): Promise<QueryCatalog>;
}

const INTERNAL = { contacts: Ops.contactsInternal, deals: Ops.dealsInternal } as const satisfies Record<ObjectService, unknown>;

/**
 * The query handlers of a service, read from the registry: `POST /<slug>/query` and `/aggregate` of every
 * queryable object it keeps, and the internal operations other services' queries and MCP's describe_object
 * ask it (conditions as ids, values by id, the paths a query may name). `catalogs` is the service's
 * RecordCatalogs provider.
 */
export function recordQueriesController<S extends ObjectService>(service: S, catalogs: Type<RecordCatalogs<S>>) {
  const internal = INTERNAL[service];
  const objects = slugsWith('queryable', service) as Array<QueryableBy<S>>;

  @Controller()
  class RecordQueriesController {
    @Inject(catalogs) readonly catalogs!: RecordCatalogs<S>;
    @Inject(CatalogQueries) readonly queries!: CatalogQueries;

    async query(ctx: RequestContext, object: QueryableBy<S>, query: RecordQueryDto) {
      return this.queries.run(ctx, await this.catalogs.of(object), query);
    }

    async aggregate(ctx: RequestContext, object: QueryableBy<S>, request: AggregateDto) {
      return this.queries.aggregate(ctx, await this.catalogs.of(object, namesCustomFields(request)), request);
    }

    @Handles(internal.queryMatch)
    async match(@Payload('body') request: RemoteMatchRequest) {
      return { ids: await this.queries.match(await this.catalogs.related(request.object, request.prefix), request) };
    }

    @Handles(internal.queryValues)
    async values(@Payload('body') request: RemoteValuesRequest) {
      return this.queries.values(await this.catalogs.related(request.object, request.prefix), request);
    }

    /**
     * A page of an export (docs/exports.md): the query's items in id order, each with the record's version
     * read in the same statement. Each page is a statement of its own: no snapshot is held across pages.
     */
    @Handles(internal.exportPage)
    async exportPage(@Payload('ctx') ctx: RequestContext, @Payload('body') request: ExportPageRequest) {
      if (!objects.includes(request.object as QueryableBy<S>))
        throw DomainError.invalid('objects', `${service} keeps no object '${request.object}' to export.`);
      const catalog = await this.catalogs.of(request.object as QueryableBy<S>);
      const versioned: QueryCatalog = { ...catalog, present: (row) => ({ ...(catalog.present(row) as object), version: Number(row.version) }) };
      const fields = request.fields ? [...request.fields.filter((f) => f !== 'version'), 'version'] : undefined;
      const query = { filter: request.filter, fields, sort: [{ field: 'id', direction: 'asc' as const }], cursor: request.cursor, limit: request.limit };
      return this.queries.run(ctx, versioned, query);
    }

    @Handles(internal.queryFields)
    async fields(@Payload('ctx') ctx: RequestContext, @Payload('body') { object, prefix }: QueryFieldsRequest) {
      const catalog = prefix ? await this.catalogs.related(object, prefix) : await this.catalogs.described(object);
      return { fields: await this.queries.fields(ctx, catalog) };
    }
  }

  handleEach(
    RecordQueriesController,
    objects.map((slug) => [slug, Ops[slug].query] as const),
    (self, ctx, slug, query: RecordQueryDto) => self.query(ctx, slug, query),
  );
  handleEach(
    RecordQueriesController,
    objects.map((slug) => [slug, Ops.aggregates[slug]] as const),
    (self, ctx, slug, request: AggregateDto) => self.aggregate(ctx, slug, request),
  );
  return RecordQueriesController;
}

import { Page } from '@crm/common';
import { QueryFieldInfo, QueryFieldsRequest, RecordQueryDto, RemoteMatchRequest, RemoteValuesReply, RemoteValuesRequest, RequestContext } from '@crm/contracts';
import { CatalogQueries, QueryItem } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { isQueryableObject, QueryableObject, QueryCatalogs } from './query-catalogs';

/**
 * `POST /<object>/query` over the objects this service keeps, built-in and custom (docs/query.md), and
 * the part of other services' queries that reaches them (`contact.*` on deals): conditions answered as
 * ids, paths read by id, and the paths a query may name.
 */
@Injectable()
export class RecordQueryService {
  constructor(
    private readonly catalogs: QueryCatalogs,
    private readonly queries: CatalogQueries,
  ) {}

  /** A query over a built-in object. */
  async run(ctx: RequestContext, object: QueryableObject, query: RecordQueryDto): Promise<Page<QueryItem>> {
    return this.queries.run(ctx, await this.catalogs.of(object), query);
  }

  /** A query over a custom object's records. */
  async records(ctx: RequestContext, slug: string, query: RecordQueryDto): Promise<Page<QueryItem>> {
    return this.queries.run(ctx, await this.catalogs.records(slug), query);
  }

  /** Another service's conditions on contacts, companies or users (`contact.email` on deals), as ids. */
  async match(request: RemoteMatchRequest): Promise<string[][]> {
    return this.queries.match(await this.catalogs.related(request.object, request.prefix), request);
  }

  /** The paths of contacts, companies or users another service's query returns, by id. */
  async values(request: RemoteValuesRequest): Promise<RemoteValuesReply> {
    return this.queries.values(await this.catalogs.related(request.object, request.prefix), request);
  }

  /** What a query over an object (or, given a prefix, a relation into it) may name: what MCP's describe_object lists. */
  async fields(ctx: RequestContext, { object, prefix }: QueryFieldsRequest): Promise<QueryFieldInfo[]> {
    const catalog = prefix
      ? await this.catalogs.related(object, prefix)
      : isQueryableObject(object)
        ? await this.catalogs.of(object)
        : await this.catalogs.records(object);
    return this.queries.fields(ctx, catalog);
  }
}

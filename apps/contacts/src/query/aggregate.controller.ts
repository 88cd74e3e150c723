import { AggregateDto, Ops, RequestContext, slugsWith } from '@crm/contracts';
import { Handles, handleEach } from '@crm/runtime';
import { CatalogQueries, namesCustomFields, QueryCatalog } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { QueryableObject, QueryCatalogs } from './query-catalogs';

/** `POST /<object>/aggregate` for the objects this service keeps (docs/aggregate.md), over the query's catalogs. */
@Controller()
export class AggregateController {
  constructor(
    private readonly catalogs: QueryCatalogs,
    private readonly queries: CatalogQueries,
  ) {}

  private run(ctx: RequestContext, catalog: QueryCatalog, request: AggregateDto) {
    return this.queries.aggregate(ctx, catalog, request);
  }

  /** Each built-in object's `POST /<slug>/aggregate` (handleEach below). */
  async object(ctx: RequestContext, object: QueryableObject, request: AggregateDto) {
    return this.run(ctx, await this.catalogs.of(object, namesCustomFields(request)), request);
  }

  @Handles(Ops.aggregates.records)
  async records(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.records(slug), request);
  }
}

handleEach(
  AggregateController,
  slugsWith('queryable', 'contacts').map((slug) => [slug, Ops.aggregates[slug]] as const),
  (self, ctx, slug, request: AggregateDto) => self.object(ctx, slug, request),
);

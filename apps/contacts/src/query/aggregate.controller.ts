import { AggregateDto, Ops, RequestContext } from '@crm/contracts';
import { CatalogQueries, Handles, QueryCatalog } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { QueryCatalogs } from './query-catalogs';

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

  @Handles(Ops.aggregates.contacts)
  async contacts(@Payload('ctx') ctx: RequestContext, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.of('contacts'), request);
  }

  @Handles(Ops.aggregates.companies)
  async companies(@Payload('ctx') ctx: RequestContext, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.of('companies'), request);
  }

  @Handles(Ops.aggregates.users)
  async users(@Payload('ctx') ctx: RequestContext, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.of('users'), request);
  }

  @Handles(Ops.aggregates.activities)
  async activities(@Payload('ctx') ctx: RequestContext, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.of('activities'), request);
  }

  @Handles(Ops.aggregates.tasks)
  async tasks(@Payload('ctx') ctx: RequestContext, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.of('tasks'), request);
  }

  @Handles(Ops.aggregates.records)
  async records(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') request: AggregateDto) {
    return this.run(ctx, await this.catalogs.records(slug), request);
  }
}

import { AggregateDto, Ops, RecordQueryDto, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { CatalogQueries } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { QueryCatalogs } from './query-catalogs';

/**
 * `POST /objects/:slug/records/query` and `/aggregate`: custom object records (docs/query.md, docs/aggregate.md).
 * The built-in objects' queries, and other services' queries into them, are the engine's (recordQueriesController).
 */
@Controller()
export class QueryController {
  constructor(
    private readonly catalogs: QueryCatalogs,
    private readonly queries: CatalogQueries,
  ) {}

  @Handles(Ops.objects.queryRecords)
  async records(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, await this.catalogs.records(slug), query);
  }

  @Handles(Ops.aggregates.records)
  async aggregate(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') request: AggregateDto) {
    return this.queries.aggregate(ctx, await this.catalogs.records(slug), request);
  }
}

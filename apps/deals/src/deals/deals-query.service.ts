import { Page } from '@crm/common';
import {
  AggregateDto,
  AggregateReply,
  DEAL_SOURCES,
  DEAL_STATUSES,
  QueryFieldInfo,
  QueryFieldsRequest,
  RecordQueryDto,
  RemoteMatchRequest,
  RemoteValuesReply,
  RemoteValuesRequest,
  RequestContext,
  STAGE_TYPES,
} from '@crm/contracts';
import { BuiltInCustomFieldsService, catalogOf, CatalogQueries, CatalogSpec, namesCustomFields, QueryItem, relatedCatalogOf } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';

const DEALS = {
  object: 'deals',
  entity: Deal,
  alias: 'd',
  enums: { status: DEAL_STATUSES, source: DEAL_SOURCES },
  exclude: ['stale_notified_at'],
} as const;

/**
 * `POST /deals/query` (docs/query.md): any field of the deal, its custom fields, its stage and pipeline
 * one hop away, and its contact, company and owner, which the contacts service keeps and answers for.
 * `days_in_stage` and `deal_age_days` are computed when a deal is shown, not stored: filter on
 * `stage_entered_at` and `created_at` instead. Other services' queries reach deals through `deal.*`.
 */
@Injectable()
export class DealsQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly customFields: BuiltInCustomFieldsService,
    private readonly queries: CatalogQueries,
  ) {}

  async run(ctx: RequestContext, query: RecordQueryDto): Promise<Page<QueryItem>> {
    return this.queries.run(ctx, await this.catalog(), query);
  }

  /** `POST /deals/aggregate` (docs/aggregate.md), over the query's catalog. */
  async aggregate(ctx: RequestContext, request: AggregateDto): Promise<AggregateReply> {
    return this.queries.aggregate(ctx, await this.catalog(namesCustomFields(request)), request);
  }

  /** What a query over deals (or, given a prefix, another service's relation into them) may name. */
  async fields(ctx: RequestContext, request: QueryFieldsRequest): Promise<QueryFieldInfo[]> {
    return this.queries.fields(ctx, request.prefix ? await this.related({ object: request.object, prefix: request.prefix }) : await this.catalog());
  }

  /** The catalog, with the custom fields' definitions unless the caller knows none is named (namesCustomFields). */
  private async catalog(withCustomFields = true) {
    return catalogOf(this.dataSource, {
      ...DEALS,
      present: presentDeal,
      customFields: withCustomFields ? await this.definitions() : [],
      relations: [
        { name: 'stage', table: { entity: Stage, alias: 's', enums: { type: STAGE_TYPES } }, column: 'stage_id' },
        { name: 'pipeline', table: { entity: Pipeline, alias: 'p' }, column: 'pipeline_id' },
      ],
      remotes: [
        { name: 'contact', column: 'contact_id', object: 'contacts', via: 'contacts' },
        { name: 'company', column: 'company_id', object: 'companies', via: 'contacts' },
        { name: 'owner', column: 'owner_id', object: 'users', via: 'contacts' },
      ],
    } satisfies CatalogSpec);
  }

  /** Another service's conditions on `deal.*` (tasks whose deal is won), as deal ids. */
  async match(request: RemoteMatchRequest): Promise<string[][]> {
    return this.queries.match(await this.related(request), request);
  }

  /** The `deal.*` paths another service's query returns, by deal id. */
  async values(request: RemoteValuesRequest): Promise<RemoteValuesReply> {
    return this.queries.values(await this.related(request), request);
  }

  private async related(request: { object: string; prefix: string }) {
    if (request.object !== 'deals') throw new Error(`the deals service keeps no '${request.object}' to query`);
    return relatedCatalogOf(this.dataSource, { ...DEALS, customFields: await this.definitions() }, request.prefix);
  }

  private async definitions() {
    return (await this.customFields.state(this.dataSource.manager, 'deals')).fields;
  }
}

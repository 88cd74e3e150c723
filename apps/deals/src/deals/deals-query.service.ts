import { Page, ServiceConfig } from '@crm/common';
import { DEAL_SOURCES, DEAL_STATUSES, RecordQueryDto, STAGE_TYPES } from '@crm/contracts';
import { BuiltInCustomFieldsService, catalogOf, queryBudgetMs, QueryItem, runRecordQuery, SERVICE_CONFIG } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';

/**
 * `POST /deals/query` (docs/query.md): any field of the deal, its custom fields, and its stage and pipeline
 * one hop away. `days_in_stage` and `deal_age_days` are computed when a deal is shown, not stored: filter on
 * `stage_entered_at` and `created_at` instead.
 */
@Injectable()
export class DealsQuery {
  constructor(
    private readonly dataSource: DataSource,
    private readonly customFields: BuiltInCustomFieldsService,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(DEALS_SETTINGS) private readonly settings: DealsSettings,
  ) {}

  async run(query: RecordQueryDto): Promise<Page<QueryItem>> {
    const { fields } = await this.customFields.state(this.dataSource.manager, 'deals');
    const catalog = catalogOf(this.dataSource, {
      object: 'deals',
      entity: Deal,
      alias: 'd',
      enums: { status: DEAL_STATUSES, source: DEAL_SOURCES },
      exclude: ['stale_notified_at'],
      present: presentDeal,
      customFields: fields,
      relations: [
        { name: 'stage', table: { entity: Stage, alias: 's', enums: { type: STAGE_TYPES } }, column: 'stage_id' },
        { name: 'pipeline', table: { entity: Pipeline, alias: 'p' }, column: 'pipeline_id' },
      ],
    });
    return runRecordQuery(this.dataSource, catalog, query, { timeoutMs: queryBudgetMs(this.settings.queryTimeoutMs, this.config.rpcTimeoutMs) });
  }
}

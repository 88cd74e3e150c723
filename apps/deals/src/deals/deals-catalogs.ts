import { DEAL_SOURCES, DEAL_STATUSES, STAGE_TYPES } from '@crm/contracts';
import { BuiltInCustomFieldsService, catalogOf, CatalogSpec, QueryableBy, QueryCatalog, QueryTable, RecordCatalogs, relatedCatalogOf } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Pipeline } from '../pipelines/pipeline.entity';
import { Stage } from '../pipelines/stage.entity';
import { Deal } from './deal.entity';
import { presentDeal } from './deal.presenter';
import { Product } from '../products/product.entity';
import { presentProduct } from '../products/products.batch';

/** A deal's row as queries name it, its own or one hop away (a line item's `deal.*`). */
export const DEAL_TABLE: QueryTable = {
  entity: Deal,
  alias: 'd',
  enums: { status: DEAL_STATUSES, source: DEAL_SOURCES },
  exclude: ['stale_notified_at'],
};

/**
 * What a query over each queryable object of this service may name (docs/query.md). A deal: any field, its
 * custom fields, its stage and pipeline one hop away, and its contact, company and owner, which the contacts
 * service keeps and answers for. `days_in_stage` and `deal_age_days` are computed when a deal is shown, not
 * stored: filter on `stage_entered_at` and `created_at` instead. Other services' queries reach deals
 * through `deal.*`.
 */
const OBJECTS: Record<QueryableBy<'deals'>, Omit<CatalogSpec, 'object' | 'customFields'>> = {
  deals: {
    ...DEAL_TABLE,
    present: presentDeal,
    relations: [
      { name: 'stage', table: { entity: Stage, alias: 's', enums: { type: STAGE_TYPES } }, column: 'stage_id' },
      { name: 'pipeline', table: { entity: Pipeline, alias: 'p' }, column: 'pipeline_id' },
    ],
    remotes: [
      { name: 'contact', column: 'contact_id', object: 'contacts', via: 'contacts' },
      { name: 'company', column: 'company_id', object: 'companies', via: 'contacts' },
      { name: 'owner', column: 'owner_id', object: 'users', via: 'contacts' },
    ],
  },
  products: { entity: Product, alias: 'pr', present: presentProduct },
};

function queryable(object: string): object is QueryableBy<'deals'> {
  return Object.hasOwn(OBJECTS, object);
}

@Injectable()
export class DealsCatalogs extends RecordCatalogs<'deals'> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly customFields: BuiltInCustomFieldsService,
  ) {
    super();
  }

  /** The catalog, with the custom fields' definitions unless the caller knows none is named (namesCustomFields). */
  async of(object: QueryableBy<'deals'>, withCustomFields = true): Promise<QueryCatalog> {
    return catalogOf(this.dataSource, { object, ...OBJECTS[object], customFields: withCustomFields ? await this.definitions(object) : [] } as CatalogSpec);
  }

  async described(object: string): Promise<QueryCatalog> {
    if (!queryable(object)) throw new Error(`the deals service keeps no queryable '${object}'`);
    return this.of(object);
  }

  /** Another service's conditions or values on `deal.*` (tasks whose deal is won). */
  async related(object: string, prefix: string): Promise<QueryCatalog> {
    if (!queryable(object)) throw new Error(`the deals service keeps no queryable '${object}'`);
    return relatedCatalogOf(this.dataSource, { object, ...OBJECTS[object], customFields: await this.definitions(object) }, prefix);
  }

  private async definitions(object: QueryableBy<'deals'>) {
    return (await this.customFields.state(this.dataSource.manager, object)).fields;
  }
}

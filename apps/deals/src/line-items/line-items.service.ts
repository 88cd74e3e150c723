import { CursorCodec, keysetPage, Page, PageQuery } from '@crm/common';
import { AggregateDto, BatchReply, BatchWriteDto, CreateLineItemDto, LineItemView, RecordQueryDto, RequestContext, UpdateLineItemDto } from '@crm/contracts';
import { BatchRunner, CatalogQueries, catalogOf, QueryCatalog } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DEAL_TABLE } from '../deals/deals-catalogs';
import { findDeal } from '../deals/find-deal';
import { Product } from '../products/product.entity';
import { presentLineItem } from './line-amount';
import { LineItem } from './line-item.entity';
import { DealLineItemsWriter } from './line-items.batch';

/**
 * A deal's line items (docs/products.md): each write a batch through the deal's line writer, which locks
 * the deal first; and the lines of every deal queried and aggregated like records (revenue by product),
 * with the deal and the product one hop away.
 */
@Injectable()
export class LineItemsService {
  private lines?: QueryCatalog;

  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly batches: BatchRunner,
    private readonly queries: CatalogQueries,
  ) {}

  add(ctx: RequestContext, dealId: string, dto: CreateLineItemDto): Promise<LineItemView> {
    return this.batches.one(ctx, new DealLineItemsWriter(dealId), { create: [{ index: 0, body: dto }] });
  }

  update(ctx: RequestContext, dealId: string, lineId: string, dto: UpdateLineItemDto): Promise<LineItemView> {
    return this.batches.one(ctx, new DealLineItemsWriter(dealId), { update: [{ index: 0, id: lineId, body: dto }] });
  }

  async remove(ctx: RequestContext, dealId: string, lineId: string): Promise<void> {
    await this.batches.one(ctx, new DealLineItemsWriter(dealId), { remove: [{ index: 0, id: lineId }] });
  }

  batch(ctx: RequestContext, dealId: string, dto: BatchWriteDto): Promise<BatchReply<LineItemView>> {
    return this.batches.run(ctx, dto, new DealLineItemsWriter(dealId));
  }

  async list(dealId: string, query: PageQuery): Promise<Page<LineItemView>> {
    await findDeal(this.dataSource.manager, dealId);
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(LineItem), 'l', `deals/${dealId}/line_items`, query);
    qb.andWhere('l.deal_id = :dealId', { dealId });
    return read(presentLineItem);
  }

  query(ctx: RequestContext, query: RecordQueryDto) {
    return this.queries.run(ctx, this.catalog(), query);
  }

  aggregate(ctx: RequestContext, request: AggregateDto) {
    return this.queries.aggregate(ctx, this.catalog(), request);
  }

  /** Every deal's lines: their own fields, and `deal.*` and `product.*` one hop away (a removed product's are null). */
  private catalog(): QueryCatalog {
    return (this.lines ??= catalogOf(this.dataSource, {
      object: 'line_items',
      entity: LineItem,
      alias: 'li',
      present: presentLineItem,
      relations: [
        {
          name: 'deal',
          table: DEAL_TABLE,
          column: 'deal_id',
        },
        { name: 'product', table: { entity: Product, alias: 'pr' }, column: 'product_id' },
      ],
    }));
  }
}

import { PageQuery } from '@crm/common';
import { AggregateDto, BatchWriteDto, CreateLineItemDto, Ops, RecordQueryDto, RequestContext, UpdateLineItemDto } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { LineItemsService } from './line-items.service';

type LineParams = { id: string; line_item_id: string };

/** POST, GET, PATCH and DELETE /deals/:id/line_items, a deal's batch of lines, and every deal's lines queried and aggregated. */
@Controller()
export class LineItemsController {
  constructor(private readonly lines: LineItemsService) {}

  @Handles(Ops.lineItems.add)
  async add(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: CreateLineItemDto) {
    return { data: await this.lines.add(ctx, id, body) };
  }

  @Handles(Ops.lineItems.list)
  list(@Payload('params') { id }: { id: string }, @Payload('query') query: PageQuery) {
    return this.lines.list(id, query);
  }

  @Handles(Ops.lineItems.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id, line_item_id }: LineParams, @Payload('body') body: UpdateLineItemDto) {
    return { data: await this.lines.update(ctx, id, line_item_id, body) };
  }

  @Handles(Ops.lineItems.remove)
  async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { id, line_item_id }: LineParams) {
    await this.lines.remove(ctx, id, line_item_id);
  }

  @Handles(Ops.lineItems.batch)
  batch(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: BatchWriteDto) {
    return this.lines.batch(ctx, id, body);
  }

  @Handles(Ops.lineItems.query)
  query(@Payload('ctx') ctx: RequestContext, @Payload('body') body: RecordQueryDto) {
    return this.lines.query(ctx, body);
  }

  @Handles(Ops.lineItems.aggregate)
  aggregate(@Payload('ctx') ctx: RequestContext, @Payload('body') body: AggregateDto) {
    return this.lines.aggregate(ctx, body);
  }
}

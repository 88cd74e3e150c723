import { SortablePageQuery } from '@crm/common';
import {
  BatchWriteDto,
  CreateDealDto,
  ListDealsQuery,
  MoveDealStageDto,
  Ops,
  QueryFieldsRequest,
  RecordQueryDto,
  RemoteMatchRequest,
  RemoteValuesRequest,
  RequestContext,
  UpdateDealDto,
} from '@crm/contracts';
import { BatchRunner, Handles } from '@crm/runtime';
import { DealsBatchWriter } from './deals.batch';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DealsQuery } from './deals-query.service';
import { DealsService } from './deals.service';

@Controller()
export class DealsController {
  constructor(
    private readonly deals: DealsService,
    private readonly queries: DealsQuery,
    private readonly batches: BatchRunner,
    private readonly batchWriter: DealsBatchWriter,
  ) {}

  @Handles(Ops.deals.batch)
  batch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: BatchWriteDto) {
    return this.batches.run(ctx, body, this.batchWriter);
  }

  @Handles(Ops.deals.query)
  query(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, query);
  }

  @Handles(Ops.dealsInternal.queryMatch)
  async queryMatch(@Payload('body') request: RemoteMatchRequest) {
    return { ids: await this.queries.match(request) };
  }

  @Handles(Ops.dealsInternal.queryFields)
  async queryFields(@Payload('ctx') ctx: RequestContext, @Payload('body') request: QueryFieldsRequest) {
    return { fields: await this.queries.fields(ctx, request) };
  }

  @Handles(Ops.dealsInternal.queryValues)
  async queryValues(@Payload('body') request: RemoteValuesRequest) {
    return this.queries.values(request);
  }

  @Handles(Ops.deals.create)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreateDealDto) {
    return { data: await this.deals.create(ctx, body) };
  }

  @Handles(Ops.deals.list)
  list(@Payload('query') query: ListDealsQuery) {
    return this.deals.list(query);
  }

  @Handles(Ops.deals.get)
  get(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    return this.deals.get(ctx, id);
  }

  @Handles(Ops.deals.update)
  update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateDealDto) {
    return this.deals.update(ctx, id, body);
  }

  @Handles(Ops.deals.remove)
  async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    await this.deals.remove(ctx, id);
  }

  @Handles(Ops.deals.moveStage)
  moveStage(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: MoveDealStageDto) {
    return this.deals.moveStage(ctx, id, body.stage_id);
  }

  @Handles(Ops.deals.history)
  history(@Payload('params') { id }: { id: string }, @Payload('query') query: SortablePageQuery) {
    return this.deals.history(id, query);
  }
}

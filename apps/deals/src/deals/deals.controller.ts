import { SortablePageQuery } from '@crm/common';
import {
  MoveDealStageDto,
  Ops,
  QueryFieldsRequest,
  RecordQueryDto,
  RemoteMatchRequest,
  RemoteValuesRequest,
  RequestContext,
  UpdateDealDto,
} from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { recordsController } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DealsBatchWriter } from './deals.batch';
import { DealsQuery } from './deals-query.service';
import { DealsService } from './deals.service';

// Decorated again so its own constructor's parameter types are recorded for injection.
@Controller()
export class DealsController extends recordsController(DealsService, DealsBatchWriter, Ops.deals) {
  constructor(private readonly queries: DealsQuery) {
    super();
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

  @Handles(Ops.deals.get)
  get(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    return this.records.get(ctx, id);
  }

  @Handles(Ops.deals.update)
  update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateDealDto) {
    return this.records.update(ctx, id, body);
  }

  @Handles(Ops.deals.moveStage)
  moveStage(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: MoveDealStageDto) {
    return this.records.moveStage(ctx, id, body.stage_id);
  }

  @Handles(Ops.deals.history)
  history(@Payload('params') { id }: { id: string }, @Payload('query') query: SortablePageQuery) {
    return this.records.history(id, query);
  }
}

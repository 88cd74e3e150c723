import { SortablePageQuery } from '@crm/common';
import { MoveDealStageDto, Ops, RequestContext, UpdateDealDto } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { recordsController } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DealsBatchWriter } from './deals.batch';
import { DealsService } from './deals.service';

// Decorated again so its own constructor's parameter types are recorded for injection.
@Controller()
export class DealsController extends recordsController(DealsService, DealsBatchWriter, Ops.deals) {
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

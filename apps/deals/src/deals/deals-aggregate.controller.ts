import { AggregateDto, Ops, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DealsQuery } from './deals-query.service';

/** `POST /deals/aggregate` (docs/aggregate.md). */
@Controller()
export class DealsAggregateController {
  constructor(private readonly queries: DealsQuery) {}

  @Handles(Ops.aggregates.deals)
  aggregate(@Payload('ctx') ctx: RequestContext, @Payload('body') request: AggregateDto) {
    return this.queries.aggregate(ctx, request);
  }
}

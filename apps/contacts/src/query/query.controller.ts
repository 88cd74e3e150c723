import { Ops, QueryFieldsRequest, RecordQueryDto, RemoteMatchRequest, RemoteValuesRequest, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { RecordQueryService } from './query.service';

/** `POST /<object>/query` for the objects this service keeps (docs/query.md), and other services' queries into them. */
@Controller()
export class QueryController {
  constructor(private readonly queries: RecordQueryService) {}

  @Handles(Ops.contactsInternal.queryMatch)
  async match(@Payload('body') request: RemoteMatchRequest) {
    return { ids: await this.queries.match(request) };
  }

  @Handles(Ops.contactsInternal.queryValues)
  values(@Payload('body') request: RemoteValuesRequest) {
    return this.queries.values(request);
  }

  @Handles(Ops.contactsInternal.queryFields)
  async fields(@Payload('ctx') ctx: RequestContext, @Payload('body') request: QueryFieldsRequest) {
    return { fields: await this.queries.fields(ctx, request) };
  }

  @Handles(Ops.objects.queryRecords)
  records(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') query: RecordQueryDto) {
    return this.queries.records(ctx, slug, query);
  }

  @Handles(Ops.contacts.query)
  contacts(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, 'contacts', query);
  }

  @Handles(Ops.companies.query)
  companies(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, 'companies', query);
  }

  @Handles(Ops.users.query)
  users(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, 'users', query);
  }

  @Handles(Ops.activities.query)
  activities(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, 'activities', query);
  }

  @Handles(Ops.tasks.query)
  tasks(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.queries.run(ctx, 'tasks', query);
  }
}

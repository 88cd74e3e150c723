import { Ops, QueryFieldsRequest, RecordQueryDto, RemoteMatchRequest, RemoteValuesRequest, RequestContext, slugsWith } from '@crm/contracts';
import { Handles, handleEach } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { QueryableObject } from './query-catalogs';
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

  /** Each built-in object's `POST /<slug>/query` (handleEach below). */
  object(ctx: RequestContext, object: QueryableObject, query: RecordQueryDto) {
    return this.queries.run(ctx, object, query);
  }
}

handleEach(
  QueryController,
  slugsWith('queryable', 'contacts').map((slug) => [slug, Ops[slug].query] as const),
  (self, ctx, slug, query: RecordQueryDto) => self.object(ctx, slug, query),
);

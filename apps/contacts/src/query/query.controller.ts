import { CursorCodec, ServiceConfig } from '@crm/common';
import { Ops, QueryFieldsRequest, RecordQueryDto, RemoteMatchRequest, RemoteValuesRequest, RequestContext } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import {
  describeQueryFields,
  Handles,
  matchRecordIds,
  pickRecordValues,
  QueryRunOptions,
  queryRunOptions,
  remoteQueriesOver,
  runRecordQuery,
  SERVICE_CONFIG,
} from '@crm/runtime';
import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { CONTACTS_SETTINGS, ContactsSettings } from '../contacts.settings';
import { isQueryableObject, QueryableObject, QueryCatalogs } from './query-catalogs';

/** `POST /<object>/query` for the objects this service keeps (docs/query.md). */
@Controller()
export class QueryController {
  constructor(
    private readonly catalogs: QueryCatalogs,
    private readonly dataSource: DataSource,
    private readonly rpc: RpcCaller,
    private readonly cursors: CursorCodec,
    @Inject(SERVICE_CONFIG) private readonly config: ServiceConfig,
    @Inject(CONTACTS_SETTINGS) private readonly settings: ContactsSettings,
  ) {}

  private budget(): QueryRunOptions {
    return queryRunOptions(this.settings, this.config.rpcTimeoutMs);
  }

  private async run(ctx: RequestContext, object: QueryableObject, query: RecordQueryDto) {
    return runRecordQuery(this.dataSource, await this.catalogs.of(object), query, { ...this.budget(), remote: remoteQueriesOver(this.rpc, ctx) }, this.cursors);
  }

  /** Another service's conditions on contacts, companies or users (`contact.email` on deals), as ids. */
  @Handles(Ops.contactsInternal.queryMatch)
  async match(@Payload('body') request: RemoteMatchRequest) {
    return {
      ids: await matchRecordIds(this.dataSource, await this.catalogs.related(request.object, request.prefix), request.lookups, request.within, this.budget()),
    };
  }

  /** The paths of contacts, companies or users another service's query returns, by id. */
  @Handles(Ops.contactsInternal.queryValues)
  async values(@Payload('body') request: RemoteValuesRequest) {
    return pickRecordValues(this.dataSource, await this.catalogs.related(request.object, request.prefix), request.ids, request.fields, this.budget());
  }

  /** What a query over an object (or, given a prefix, a relation into it) may name: what MCP's describe_object lists. */
  @Handles(Ops.contactsInternal.queryFields)
  async fields(@Payload('ctx') ctx: RequestContext, @Payload('body') request: QueryFieldsRequest) {
    const { object, prefix } = request;
    const catalog = prefix
      ? await this.catalogs.related(object, prefix)
      : isQueryableObject(object)
        ? await this.catalogs.of(object)
        : await this.catalogs.records(object);
    return { fields: await describeQueryFields(catalog, remoteQueriesOver(this.rpc, ctx)) };
  }

  @Handles(Ops.objects.queryRecords)
  async records(@Payload('ctx') ctx: RequestContext, @Payload('params') { slug }: { slug: string }, @Payload('body') query: RecordQueryDto) {
    return runRecordQuery(
      this.dataSource,
      await this.catalogs.records(slug),
      query,
      { ...this.budget(), remote: remoteQueriesOver(this.rpc, ctx) },
      this.cursors,
    );
  }

  @Handles(Ops.contacts.query)
  contacts(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.run(ctx, 'contacts', query);
  }

  @Handles(Ops.companies.query)
  companies(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.run(ctx, 'companies', query);
  }

  @Handles(Ops.users.query)
  users(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.run(ctx, 'users', query);
  }

  @Handles(Ops.activities.query)
  activities(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.run(ctx, 'activities', query);
  }

  @Handles(Ops.tasks.query)
  tasks(@Payload('ctx') ctx: RequestContext, @Payload('body') query: RecordQueryDto) {
    return this.run(ctx, 'tasks', query);
  }
}

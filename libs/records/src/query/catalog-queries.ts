import { CursorCodec, Page, ServiceConfig } from '@crm/common';
import {
  AggregateDto,
  AggregateReply,
  QueryFieldInfo,
  RecordQueryDto,
  RemoteMatchRequest,
  RemoteValuesReply,
  RemoteValuesRequest,
  RequestContext,
  forbiddenRead,
  mayRead,
  pathsOfQuery,
} from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SERVICE_CONFIG } from '@crm/runtime';
import { runAggregate } from './aggregate-run';
import { QueryRunOptions, queryRunOptions, QuerySettings } from './query-budget';
import { describeQueryFields, QueryCatalog, relationResourceOf } from './query-catalog';
import { QueryItem, runRecordQuery } from './query-runner';
import { matchRecordIds, pickRecordValues } from './remote-matching';
import { remoteQueriesOver } from './remote-queries';

/**
 * The query operations of a service over the catalogs it builds: its own `POST /<object>/query`, and the
 * parts of other services' queries that reach its records. Each runs within the service's query budget,
 * and reaches other services on behalf of its caller.
 */
export class CatalogQueries {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rpc: RpcCaller,
    private readonly cursors: CursorCodec,
    private readonly options: QueryRunOptions,
  ) {}

  async run(ctx: RequestContext, catalog: QueryCatalog, query: RecordQueryDto): Promise<Page<QueryItem>> {
    refuseUnreadableRelations(ctx, catalog, query);
    return runRecordQuery(this.dataSource, catalog, query, { ...this.options, remote: remoteQueriesOver(this.rpc, ctx) }, this.cursors);
  }

  /** `POST /<object>/aggregate` over the catalog (docs/aggregate.md). */
  async aggregate(ctx: RequestContext, catalog: QueryCatalog, request: AggregateDto): Promise<AggregateReply> {
    refuseUnreadableRelations(ctx, catalog, request);
    return runAggregate(this.dataSource, catalog, request, { ...this.options, remote: remoteQueriesOver(this.rpc, ctx) }, this.cursors);
  }

  /** What a query over the catalog may name, the paths other services answer for included. */
  fields(ctx: RequestContext, catalog: QueryCatalog): Promise<QueryFieldInfo[]> {
    return describeQueryFields(catalog, remoteQueriesOver(this.rpc, ctx));
  }

  /** Another service's conditions on this service's records, as ids; the catalog names its paths as that query does. */
  match(catalog: QueryCatalog, request: Pick<RemoteMatchRequest, 'lookups' | 'within'>): Promise<string[][]> {
    return matchRecordIds(this.dataSource, catalog, request.lookups, request.within, this.options);
  }

  /** The paths of this service's records another service's query returns, by id. */
  values(catalog: QueryCatalog, request: Pick<RemoteValuesRequest, 'ids' | 'fields'>): Promise<RemoteValuesReply> {
    return pickRecordValues(this.dataSource, catalog, request.ids, request.fields, this.options);
  }
}

/**
 * A path that enters a record the caller may not read (`values.<ref>.email` of a reference to contacts,
 * for a key with only `objects.<slug>:read`) is refused naming the permission, as the gateway refuses a
 * built-in relation path: only the owning service knows where a custom object's references lead.
 */
function refuseUnreadableRelations(ctx: RequestContext, catalog: QueryCatalog, body: unknown): void {
  if (ctx.readable === undefined || !catalog.relationResources) return;
  for (const path of pathsOfQuery(body)) {
    const resource = relationResourceOf(catalog, path);
    if (resource !== undefined && !mayRead(ctx.readable, resource)) throw forbiddenRead({ resource, action: 'read' }, `reading '${path}'`);
  }
}

/** CatalogQueries for a service whose settings (under `settingsToken`) hold the query settings. */
export function catalogQueriesProvider(settingsToken: symbol | string): Provider {
  return {
    provide: CatalogQueries,
    useFactory: (dataSource: DataSource, rpc: RpcCaller, cursors: CursorCodec, config: ServiceConfig, settings: QuerySettings) =>
      new CatalogQueries(dataSource, rpc, cursors, queryRunOptions(settings, config.rpcTimeoutMs)),
    inject: [DataSource, RpcCaller, CursorCodec, SERVICE_CONFIG, settingsToken],
  };
}

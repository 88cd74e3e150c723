import { DomainError } from '@crm/common';
import {
  builtInEntry,
  ChangeSliceRequest,
  forbiddenRead,
  hasCapability,
  keptBy,
  ListChangesQuery,
  Ops,
  readableObjects,
  RecordChangesQuery,
  RequestContext,
  slugsWith,
  unreadableObject,
} from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Handles } from '@crm/runtime';
import { ChangeLog, QueryBudget } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';

/** Ids of the objects the deals service keeps: their history is its slice of the log. */
const DEALS_PREFIXES = slugsWith('history', 'deals').map((slug) => `${builtInEntry(slug)!.prefix}_`);
const keptByDeals = (object: string) => hasCapability(object, 'history') && keptBy(object, 'deals');

/**
 * Change histories (docs/changes.md): a custom object record's, and GET /changes across every object,
 * merging this service's entries with the deals service's. A built-in record's is the engine's
 * (recordChangesController).
 */
@Controller()
export class ChangesController {
  constructor(
    private readonly log: ChangeLog,
    private readonly dataSource: DataSource,
    private readonly rpc: RpcCaller,
  ) {}

  @Handles(Ops.changes.list)
  async list(@Payload('ctx') ctx: RequestContext, @Payload('query') query: ListChangesQuery) {
    await this.assertKnownObject(query.object);
    // Naming an object the caller may not read is refused; the whole log is narrowed to what it may read.
    const unreadable = query.object !== undefined && unreadableObject(ctx.readable, [query.object]);
    if (unreadable) throw forbiddenRead(unreadable, 'reading its changes');
    const local = (request: ChangeSliceRequest, budget: QueryBudget) => this.log.slice(request, budget);
    const deals = (request: ChangeSliceRequest, budget: QueryBudget) =>
      budget.ask((waitMs) => this.rpc.call(Ops.changes.dealsSlice, ctx, { body: request }, { timeoutMs: waitMs }));
    return this.log.page(query, this.partsFor(query, local, deals), readableObjects(ctx.readable));
  }

  @Handles(Ops.objects.recordChanges)
  record(@Payload('params') { slug, id }: { slug: string; id: string }, @Payload('query') query: RecordChangesQuery) {
    return this.log.forRecord(
      slug,
      id,
      query,
      () => this.exists(`SELECT 1 FROM object_records r JOIN object_types t ON t.id = r.object_type_id WHERE r.id = $1 AND t.slug = $2`, [id, slug]),
      'record',
    );
  }

  private async exists(sql: string, params: unknown[]): Promise<boolean> {
    return (await this.dataSource.query(sql, params)).length > 0;
  }

  /** Only the service that keeps the named object, or the named record, is asked. */
  private partsFor<P>(query: ListChangesQuery, local: P, deals: P): P[] {
    if (query.object) return keptByDeals(query.object) ? [deals] : [local];
    if (query.record_id) return DEALS_PREFIXES.some((p) => query.record_id!.startsWith(p)) ? [deals] : [local];
    return [local, deals];
  }

  /** A built-in object, or a custom object defined here (archived ones keep their history). */
  private async assertKnownObject(object: string | undefined): Promise<void> {
    if (object === undefined || hasCapability(object, 'history')) return;
    if (await this.exists(`SELECT 1 FROM object_types WHERE slug = $1`, [object])) return;
    throw DomainError.invalid(
      'object',
      `object '${object}' is not an object of this CRM: use ${slugsWith('history').join(', ')} or a custom object's slug`,
      'unknown_object',
    );
  }
}

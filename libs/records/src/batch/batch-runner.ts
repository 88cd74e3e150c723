import { DomainError, ErrorCode, FieldIssue, isForeignKeyViolation, isUniqueViolation, transactionOf, validateInput, validationFailed } from '@crm/common';
import { BatchItemResult, BatchReply, BatchWriteDto, EventDraft, httpStatusOf, RequestContext, ValidationWarning } from '@crm/contracts';
import { ChangeDraft, OutboxService, recordReplyWithin } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { ClassConstructor } from 'class-transformer';
import { DataSource, EntityManager } from 'typeorm';
import { reportSoftWarnings } from '@crm/runtime';

/** What one item came to: its success status and answer, or the error its single write would have given. */
export interface ItemOutcome<V> {
  index: number;
  status?: number;
  data?: V;
  error?: DomainError;
  warnings?: ValidationWarning[];
  events?: EventDraft[];
  /** Its change-history entries, exactly as its single write records them (null for an update that changed nothing). */
  changes?: Array<ChangeDraft | null>;
  /** Set by an insert whose row lost to a unique key: an upsert then updates the record that holds it. */
  keyTaken?: boolean;
}

export interface CreateItem<C> {
  index: number;
  body: C;
}

export interface UpdateItem<U> {
  index: number;
  id: string;
  body: U;
}

export interface DeleteItem {
  index: number;
  id: string;
}

/** The unique field an upsert matches items on. */
export interface UpsertKey<C> {
  field: string;
  /** The item's key value as the unique rule compares it (lowercased for email and domain), or undefined when absent. */
  valueOf(body: C): string | undefined;
  /** The ids of the records holding these values (as `valueOf` gives them), by value. */
  match(m: EntityManager, values: string[]): Promise<Map<string, string>>;
}

/** What a write records besides the item's own events and entries: those of the records it changes on the way (unlinked contacts, detached work). */
export interface BatchRecording {
  events: EventDraft[];
  changes: ChangeDraft[];
}

/**
 * The set-based writes of one object, each a handful of statements whatever the number of items, all in
 * the caller's transaction. They return an outcome for every item they were given, with its events and
 * change entries, and record nothing themselves: the runner records all of a batch's events and entries
 * with one insert, in item order.
 */
export interface BatchWriter<C extends object, U extends object, V> {
  /** As a 404 names a record. */
  noun: string;
  createBody: ClassConstructor<C>;
  updateBody: ClassConstructor<U>;
  insert(m: EntityManager, ctx: RequestContext, items: CreateItem<C>[]): Promise<ItemOutcome<V>[]>;
  update(m: EntityManager, ctx: RequestContext, items: UpdateItem<U>[]): Promise<ItemOutcome<V>[]>;
  remove(m: EntityManager, ctx: RequestContext, items: DeleteItem[]): Promise<ItemOutcome<V>[]>;
  /** The key of an upsert (`key` as the client sent it), or a 400 naming `key` when the object has none. */
  upsertKey(m: EntityManager, key: string | undefined): Promise<UpsertKey<C>>;
}

/** One write through an object's writer: what a single create, update or delete, or an import's rows, hand it. */
export type WriteItems<C, U> = { create: CreateItem<C>[] } | { update: UpdateItem<U>[] } | { remove: DeleteItem[] };

/** A single write's arguments: the request, the object's writer, the item, and the transaction it joins, if any. */
type OneWrite<C extends object, U extends object, V> = [ctx: RequestContext, writer: BatchWriter<C, U, V>, item: WriteItems<C, U>, within?: EntityManager];

/** Attempts at a batch whose set-based checks lost a race to a concurrent write (a unique value or a reference taken meanwhile). */
const ATTEMPTS = 3;

/** `{id}`: a delete item, or the id of an update item. */
function idOf(item: Record<string, unknown>): string | DomainError {
  const id = item.id;
  if (id === undefined) return validationFailed([{ field: 'id', code: 'required', message: 'id is required' }]);
  if (typeof id !== 'string') return validationFailed([{ field: 'id', code: 'invalid_value', message: 'id must be a string' }]);
  return id;
}

function parsed<T extends object>(type: ClassConstructor<T>, input: unknown): T | DomainError {
  try {
    return validateInput(type, input);
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
}

/** The whole-batch answer of all_or_none when items failed: every failing item's problems, each named `items.<index>.<field>`. */
function allOrNoneFailure(failed: ItemOutcome<unknown>[], total: number): DomainError {
  const details: FieldIssue[] = [];
  for (const { index, error } of failed) {
    const issues = error!.details?.length
      ? error!.details
      : [{ field: error!.code === ErrorCode.NotFound ? 'id' : '', code: error!.code, message: error!.message }];
    for (const issue of issues) {
      const field = issue.field ? `items.${index}.${issue.field}` : `items.${index}`;
      details.push({ field, code: issue.code, message: `items.${index}: ${issue.message}` });
    }
  }
  const codes = new Set(failed.map((f) => f.error!.code));
  const code = codes.size === 1 ? [...codes][0] : ErrorCode.ValidationFailed;
  const message = `${failed.length} of ${total} item${total === 1 ? '' : 's'} failed, so none was written (all_or_none): ${details.map((d) => d.field).join(', ')}`;
  return new DomainError(code, message, details);
}

function duplicates(values: Array<{ index: number; value: string | undefined }>, what: string): FieldIssue[] {
  const first = new Map<string, number>();
  const issues: FieldIssue[] = [];
  for (const { index, value } of values) {
    if (value === undefined) continue;
    const seen = first.get(value);
    if (seen === undefined) first.set(value, index);
    else
      issues.push({
        field: `items.${index}`,
        code: 'duplicate',
        message: `items.${index} has the same ${what} as items.${seen}; a batch may name each record once`,
      });
  }
  return issues;
}

function result<V>(outcome: ItemOutcome<V>): BatchItemResult<V> {
  if (outcome.error) return { index: outcome.index, status: httpStatusOf(outcome.error.code), error: outcome.error.toBody() };
  const item: BatchItemResult<V> = { index: outcome.index, status: outcome.status ?? 200 };
  if (outcome.data !== undefined) item.data = outcome.data;
  if (outcome.warnings?.length) item.warnings = outcome.warnings;
  return item;
}

/**
 * Runs a batch write (docs/batch.md): checks every item against the single write's rules, refuses a batch
 * that names a record twice, then applies the valid items with the object's set-based writer in one
 * transaction and records their events and change entries with one outbox insert, in item order. Without all_or_none a bad
 * item only fails itself; with it, any failure rolls everything back and answers with every failing item.
 */
@Injectable()
export class BatchRunner {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
  ) {}

  async run<C extends object, U extends object, V>(ctx: RequestContext, dto: BatchWriteDto, writer: BatchWriter<C, U, V>): Promise<BatchReply<V>> {
    if (dto.key !== undefined && dto.operation !== 'upsert') {
      throw DomainError.invalid('key', `key names the field an upsert matches on; it does not apply to ${dto.operation}.`);
    }
    const failed: ItemOutcome<V>[] = [];
    const creates: CreateItem<C>[] = [];
    const updates: UpdateItem<U>[] = [];
    const deletes: DeleteItem[] = [];
    /** For an upsert: each valid item's body as an update, used when it matches. */
    const asUpdates = new Map<number, U>();

    dto.items.forEach((item, index) => {
      if (dto.operation === 'create' || dto.operation === 'upsert') {
        const body = parsed(writer.createBody, item);
        if (body instanceof DomainError) return failed.push({ index, error: body });
        creates.push({ index, body });
        if (dto.operation === 'upsert') {
          // A matched item changes only the fields it gives, so it is read again as a PATCH body (no defaults filled in).
          const patch = parsed(writer.updateBody, item);
          if (patch instanceof DomainError) return failed.push({ index, error: patch });
          asUpdates.set(index, patch);
        }
        return;
      }
      const id = idOf(item);
      if (id instanceof DomainError) return failed.push({ index, error: id });
      if (dto.operation === 'delete') {
        const extra = Object.keys(item).filter((k) => k !== 'id');
        if (extra.length)
          return failed.push({
            index,
            error: validationFailed(extra.map((k) => ({ field: k, code: 'unknown_field', message: `unknown field '${k}': a delete item is {id}` }))),
          });
        return deletes.push({ index, id });
      }
      const { id: _id, ...fields } = item;
      const body = parsed(writer.updateBody, fields);
      if (body instanceof DomainError) return failed.push({ index, error: body });
      updates.push({ index, id, body });
    });

    const upsertKey = dto.operation === 'upsert' ? await writer.upsertKey(this.dataSource.manager, dto.key) : undefined;
    const repeated =
      dto.operation === 'upsert'
        ? duplicates(
            creates.map((c) => ({ index: c.index, value: upsertKey!.valueOf(c.body) })),
            upsertKey!.field,
          )
        : duplicates(
            [...updates, ...deletes].map((u) => ({ index: u.index, value: u.id })),
            'id',
          );
    if (repeated.length) throw validationFailed(repeated);
    if (upsertKey) {
      for (const item of creates.filter((c) => upsertKey.valueOf(c.body) === undefined)) {
        failed.push({
          index: item.index,
          error: DomainError.invalid(upsertKey.field, `${upsertKey.field} is required to upsert: items are matched on it.`, 'required'),
        });
      }
    }

    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dataSource.transaction(async (m) => {
          const outcomes: ItemOutcome<V>[] = [...failed];
          if (dto.operation === 'create') outcomes.push(...(await writer.insert(m, ctx, creates)));
          if (dto.operation === 'update') outcomes.push(...(await writer.update(m, ctx, updates)));
          if (dto.operation === 'delete') outcomes.push(...(await writer.remove(m, ctx, deletes)));
          if (upsertKey)
            outcomes.push(
              ...(await this.upsert(
                m,
                ctx,
                writer,
                upsertKey,
                creates.filter((c) => upsertKey.valueOf(c.body) !== undefined),
                asUpdates,
              )),
            );
          outcomes.sort((a, b) => a.index - b.index);

          const failures = outcomes.filter((o) => o.error);
          if (dto.all_or_none && failures.length) throw allOrNoneFailure(failures, dto.items.length);
          const applied = outcomes.filter((o) => !o.error);
          await this.outbox.record(m, { events: applied.flatMap((o) => o.events ?? []), changes: applied.flatMap((o) => o.changes ?? []) });
          const reply = { data: outcomes.map(result) };
          // Recorded with the change, so a retry after a crash right after the commit gets this answer back.
          await recordReplyWithin(m, reply);
          return reply;
        });
      } catch (err) {
        // A unique value or a referenced record changed between the checks and the write: the next attempt's checks see it.
        if (attempt < ATTEMPTS && (isUniqueViolation(err) || isForeignKeyViolation(err))) continue;
        throw err;
      }
    }
  }

  /**
   * A single create, update or delete as a batch of one through the object's writer, in its own transaction
   * (or `within` one, a savepoint's caller): the item's answer, or its error thrown as the single route
   * answers it. The body was already checked with the route's DTO. Records the item's events and change
   * entries as the single write does; the reply is recorded for an Idempotency-Key by the request's own step.
   */
  async one<C extends object, U extends object, V>(...write: OneWrite<C, U, V>): Promise<V> {
    const { data, warnings } = await this.oneWithWarnings(...write);
    // A built-in object's single write answers its soft-enforcement warnings (SoftWarningsInterceptor).
    reportSoftWarnings(warnings);
    return data;
  }

  /** `one`, with the warnings of a soft-enforced write (a custom object record's single write answers them). */
  async oneWithWarnings<C extends object, U extends object, V>(
    ...[ctx, writer, item, within]: OneWrite<C, U, V>
  ): Promise<{ data: V; warnings: ValidationWarning[] }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await transactionOf(
          this.dataSource,
          within,
        )(async (m) => {
          const [outcome] = await this.apply(m, ctx, writer, item);
          if (outcome.error) throw outcome.error;
          return { data: outcome.data as V, warnings: outcome.warnings ?? [] };
        });
      } catch (err) {
        // As for a batch: a unique value or a referenced record changed between the checks and the write.
        if (!within && attempt < ATTEMPTS && (isUniqueViolation(err) || isForeignKeyViolation(err))) continue;
        throw err;
      }
    }
  }

  /**
   * Applies checked items with the writer inside the caller's transaction and records the events and change
   * entries of those that succeeded, in item order; answers every item's outcome. An import's rows come here.
   */
  async apply<C extends object, U extends object, V>(
    m: EntityManager,
    ctx: RequestContext,
    writer: BatchWriter<C, U, V>,
    items: WriteItems<C, U>,
  ): Promise<ItemOutcome<V>[]> {
    const outcomes =
      'create' in items
        ? await writer.insert(m, ctx, items.create)
        : 'update' in items
          ? await writer.update(m, ctx, items.update)
          : await writer.remove(m, ctx, items.remove);
    outcomes.sort((a, b) => a.index - b.index);
    const applied = outcomes.filter((o) => !o.error);
    await this.outbox.record(m, { events: applied.flatMap((o) => o.events ?? []), changes: applied.flatMap((o) => o.changes ?? []) });
    return outcomes;
  }

  /** Matched items are updated with the fields they give, the others created; one that loses a race for its key to a concurrent create is updated instead. */
  private async upsert<C extends object, U extends object, V>(
    m: EntityManager,
    ctx: RequestContext,
    writer: BatchWriter<C, U, V>,
    key: UpsertKey<C>,
    items: CreateItem<C>[],
    asUpdates: Map<number, U>,
  ): Promise<ItemOutcome<V>[]> {
    const matched = await key.match(
      m,
      items.map((item) => key.valueOf(item.body)!),
    );
    const updates = (list: CreateItem<C>[], ids: Map<string, string>) =>
      list
        .filter((item) => ids.has(key.valueOf(item.body)!))
        .map((item) => ({ index: item.index, id: ids.get(key.valueOf(item.body)!)!, body: asUpdates.get(item.index)! }));
    const outcomes = await writer.update(m, ctx, updates(items, matched));
    const inserted = await writer.insert(
      m,
      ctx,
      items.filter((item) => !matched.has(key.valueOf(item.body)!)),
    );
    const lost = inserted.filter((o) => o.keyTaken).map((o) => items.find((item) => item.index === o.index)!);
    outcomes.push(...inserted.filter((o) => !o.keyTaken));
    if (lost.length) {
      const taken = await key.match(
        m,
        lost.map((item) => key.valueOf(item.body)!),
      );
      outcomes.push(...(await writer.update(m, ctx, updates(lost, taken))));
      // The record that held the key was deleted again meanwhile: the item keeps its conflict.
      outcomes.push(...inserted.filter((o) => o.keyTaken && !taken.has(key.valueOf(items.find((item) => item.index === o.index)!.body)!)));
    }
    return outcomes;
  }
}

import { ChangeSet, CursorCodec, DomainError, ErrorCode, IdPrefix, idKey, isId, pageSize, toPage } from '@crm/common';
import {
  AssociationType,
  AssociationTypeView,
  ASSOCIATION_TYPES,
  BuiltInSlug,
  builtInEntry,
  EventType,
  Page,
  PageQuery,
  RelatedSummary,
  UpdateAssociationDto,
  EventDraft,
} from '@crm/contracts';
import { ChangeDraft, OutboxService, updatedChange } from '@crm/messaging';
import { DataSource, EntityManager } from 'typeorm';
import type { BatchRecording } from '../batch/batch-runner';

/**
 * One association type as its owning service keeps it: a table of (owner, target) pairs with a role and
 * at most one primary per owner, whose target is also the owner's single-id field (`deals.contact_id`).
 */
export interface AssociationSpec {
  type: AssociationType;
  table: string;
  owner: { table: string; column: string; noun: string; prefix: IdPrefix; object: string };
  /** `field`: the owner's column naming its primary target; `path`: how the owner's change history names an association (`contacts.<id>`). */
  target: { column: string; noun: string; prefix: IdPrefix; field: string; path: string };
  events: { added: EventType; updated: EventType; removed: EventType };
  /** The owner's own update event, for a change of its single-id field (`deal.updated`). */
  ownerUpdated(ownerId: string, changes: ChangeSet): EventDraft;
}

/**
 * The spec of the association type `<owner>_<targets>` between two built-in objects, named from their
 * registry entries: the table is the type, the columns `<noun>_id`, the events `<owner>.<target>_added` and so on.
 */
export function associationBetween(owner: BuiltInSlug, target: BuiltInSlug, ownerUpdated: AssociationSpec['ownerUpdated']): AssociationSpec {
  const o = builtInEntry(owner)!;
  const t = builtInEntry(target)!;
  const type = `${o.one}_${t.many}` as AssociationType;
  const on = (what: string) => `${o.one}.${t.one}_${what}` as EventType;
  return {
    type,
    table: type,
    owner: { table: owner, column: `${o.one}_id`, noun: o.one, prefix: o.prefix, object: owner },
    target: { column: `${t.one}_id`, noun: t.one, prefix: t.prefix, field: `${t.one}_id`, path: t.many },
    events: { added: on('added'), updated: on('updated'), removed: on('removed') },
    ownerUpdated,
  };
}

export interface AssociationRow {
  owner: string;
  target: string;
  role: string | null;
  is_primary: boolean;
  created_at: Date;
}

/** What one association is, for events and history. */
type AssociationState = { role: string | null; is_primary: boolean };

const ROW_COLUMNS = (spec: AssociationSpec) => `${spec.owner.column} AS owner, ${spec.target.column} AS target, role, is_primary, created_at`;

const stateOf = (row: AssociationState): AssociationState => ({ role: row.role, is_primary: row.is_primary });

/**
 * The rules of one association type (docs/associations.md), in the owning service's transactions: add,
 * change and remove with events and change history, keep the owner's single-id field naming the primary,
 * follow the field when a write sets it, and clean up after deletions and merges.
 */
export class AssociationStore<V extends object> {
  constructor(
    readonly spec: AssociationSpec,
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly cursors: CursorCodec,
  ) {}

  /** The association as the API shows it: `{deal_id, contact_id, role, is_primary, created_at}`. */
  present(row: AssociationRow): V {
    const view: Record<string, unknown> = {
      [this.spec.owner.column]: row.owner,
      [this.spec.target.column]: row.target,
      role: row.role,
      is_primary: row.is_primary,
      created_at: row.created_at.toISOString(),
    };
    return view as V;
  }

  /**
   * Adds `target` to `owner`. `checkTarget` runs after the owner is locked and throws when the target does
   * not exist. Making it primary moves the owner's field to it and demotes the former primary.
   */
  async add(
    ownerId: string,
    body: { target: string; role?: string | null; is_primary?: boolean },
    checkTarget?: (m: EntityManager) => Promise<void>,
  ): Promise<AssociationRow> {
    return this.dataSource.transaction(async (m) => {
      const primary = await this.lockOwner(m, ownerId);
      if (checkTarget) await checkTarget(m);
      const role = await this.checkedRole(m, body.role ?? null);
      const recording: BatchRecording = { events: [], changes: [] };
      if (body.is_primary) await this.demote(m, ownerId, recording);
      const [row] = (await m.query(
        `INSERT INTO ${this.spec.table} (${this.spec.owner.column}, ${this.spec.target.column}, role, is_primary, created_at)
         VALUES ($1, $2, $3, $4, date_trunc('milliseconds', clock_timestamp()))
         ON CONFLICT DO NOTHING
         RETURNING ${ROW_COLUMNS(this.spec)}`,
        [ownerId, body.target, role, body.is_primary === true],
      )) as AssociationRow[];
      if (!row) {
        throw DomainError.conflict(`The ${this.spec.target.noun} '${body.target}' is already associated with this ${this.spec.owner.noun}.`, [
          {
            field: this.spec.target.column,
            code: 'duplicate',
            message: `${this.spec.target.column} '${body.target}' is already associated; PATCH it to change its role`,
          },
        ]);
      }
      this.recordAdded(row, recording);
      if (row.is_primary) await this.setOwnerField(m, ownerId, primary, row.target, recording);
      await this.outbox.record(m, recording);
      return row;
    });
  }

  /** Changes the role or primary flag of one association; a PATCH that changes nothing records nothing. */
  async update(ownerId: string, targetId: string, dto: UpdateAssociationDto): Promise<AssociationRow> {
    return this.dataSource.transaction(async (m) => {
      const primary = await this.lockOwner(m, ownerId);
      const before = await this.find(m, ownerId, targetId);
      const next: AssociationState = {
        role: dto.role === undefined ? before.role : await this.checkedRole(m, dto.role),
        is_primary: dto.is_primary ?? before.is_primary,
      };
      if (next.role === before.role && next.is_primary === before.is_primary) return before;
      const recording: BatchRecording = { events: [], changes: [] };
      if (next.is_primary && !before.is_primary) await this.demote(m, ownerId, recording);
      const [[row]] = (await m.query(
        `UPDATE ${this.spec.table} SET role = $3, is_primary = $4 WHERE ${this.spec.owner.column} = $1 AND ${this.spec.target.column} = $2 RETURNING ${ROW_COLUMNS(this.spec)}`,
        [ownerId, targetId, next.role, next.is_primary],
      )) as [AssociationRow[], number];
      this.recordUpdated(before, row, recording);
      if (next.is_primary !== before.is_primary) await this.setOwnerField(m, ownerId, primary, next.is_primary ? targetId : null, recording);
      await this.outbox.record(m, recording);
      return row;
    });
  }

  /** Removes one association; removing the primary clears the owner's field. */
  async remove(ownerId: string, targetId: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const primary = await this.lockOwner(m, ownerId);
      const row = await this.find(m, ownerId, targetId);
      await m.query(`DELETE FROM ${this.spec.table} WHERE ${this.spec.owner.column} = $1 AND ${this.spec.target.column} = $2`, [ownerId, targetId]);
      const recording: BatchRecording = { events: [], changes: [] };
      this.recordRemoved(row, recording, true);
      if (row.is_primary && primary === targetId) await this.setOwnerField(m, ownerId, primary, null, recording);
      await this.outbox.record(m, recording);
    });
  }

  /** One owner's associations, by target id, each with `summaries` of the targets under the target's noun. */
  async listForOwner<I extends V>(ownerId: string, query: PageQuery, summaries: (ids: string[]) => Promise<Map<string, RelatedSummary>>): Promise<Page<I>> {
    await this.requireOwner(this.dataSource.manager, ownerId);
    return this.page<I>(`${this.spec.type}/${ownerId}`, 'owner', ownerId, query, summaries, this.spec.target.noun);
  }

  /** One target's associations, by owner id (GET /companies/:id/contacts); the caller checks that the target exists. */
  async listForTarget<I extends V>(targetId: string, query: PageQuery, summaries: (ids: string[]) => Promise<Map<string, RelatedSummary>>): Promise<Page<I>> {
    return this.page<I>(`${this.spec.type}/of/${targetId}`, 'target', targetId, query, summaries, this.spec.owner.noun);
  }

  /**
   * What writes of the owner's single-id field do to associations, for many owners at once: the
   * association the field named goes, and the one it names now is created, or made primary if it
   * existed. Returns the events and history to record with the write.
   */
  async followPrimary(m: EntityManager, moves: Array<{ owner: string; from: string | null; to: string | null }>): Promise<BatchRecording> {
    const byOwner = new Map<string, { from: string | null; to: string | null }>();
    for (const move of moves) {
      const seen = byOwner.get(move.owner);
      byOwner.set(move.owner, { from: seen ? seen.from : move.from, to: move.to });
    }
    const changed = [...byOwner].filter(([, move]) => move.from !== move.to);
    const recording: BatchRecording = { events: [], changes: [] };
    const leaving = changed.filter(([, move]) => move.from !== null);
    if (leaving.length) {
      const [removed] = (await m.query(
        `DELETE FROM ${this.spec.table} a USING unnest($1::text[], $2::text[]) AS f(owner, target)
         WHERE a.${this.spec.owner.column} = f.owner AND a.${this.spec.target.column} = f.target
         RETURNING a.${this.spec.owner.column} AS owner, a.${this.spec.target.column} AS target, a.role, a.is_primary, a.created_at`,
        [leaving.map(([owner]) => owner), leaving.map(([, move]) => move.from)],
      )) as [AssociationRow[], number];
      for (const row of removed) this.recordRemoved(row, recording, true);
    }
    const arriving = changed.filter(([, move]) => move.to !== null);
    if (arriving.length) {
      const owners = arriving.map(([owner]) => owner);
      const targets = arriving.map(([, move]) => move.to);
      const earlier = new Map(
        (
          (await m.query(
            `SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} a JOIN unnest($1::text[], $2::text[]) AS w(o, t) ON a.${this.spec.owner.column} = w.o AND a.${this.spec.target.column} = w.t`,
            [owners, targets],
          )) as AssociationRow[]
        ).map((row) => [row.owner, row]),
      );
      // A primary the field did not name (the two disagreed) is demoted, so the one primary per owner holds.
      const [demoted] = (await m.query(
        `UPDATE ${this.spec.table} a SET is_primary = false FROM unnest($1::text[], $2::text[]) AS w(o, t)
         WHERE a.${this.spec.owner.column} = w.o AND a.is_primary AND a.${this.spec.target.column} <> w.t
         RETURNING a.${this.spec.owner.column} AS owner, a.${this.spec.target.column} AS target, a.role, a.is_primary, a.created_at`,
        [owners, targets],
      )) as [AssociationRow[], number];
      for (const row of demoted) this.recordUpdated({ ...row, is_primary: true }, row, recording);
      const upserted = (await m.query(
        `INSERT INTO ${this.spec.table} (${this.spec.owner.column}, ${this.spec.target.column}, role, is_primary, created_at)
         SELECT o, t, NULL, true, date_trunc('milliseconds', clock_timestamp()) FROM unnest($1::text[], $2::text[]) AS w(o, t)
         ON CONFLICT (${this.spec.owner.column}, ${this.spec.target.column}) DO UPDATE SET is_primary = true
         RETURNING ${ROW_COLUMNS(this.spec)}`,
        [owners, targets],
      )) as AssociationRow[];
      for (const row of upserted) {
        const was = earlier.get(row.owner);
        if (!was) this.recordAdded(row, recording);
        else this.recordUpdated(was, row, recording);
      }
    }
    return recording;
  }

  /** Removes every association of owners about to be deleted; the owner's own deletion is its history. */
  async removeForOwners(m: EntityManager, ownerIds: string[]): Promise<BatchRecording> {
    const recording: BatchRecording = { events: [], changes: [] };
    if (!ownerIds.length) return recording;
    const [rows] = (await m.query(`DELETE FROM ${this.spec.table} WHERE ${this.spec.owner.column} = ANY($1::text[]) RETURNING ${ROW_COLUMNS(this.spec)}`, [
      ownerIds,
    ])) as [AssociationRow[], number];
    for (const row of this.ordered(rows)) this.recordRemoved(row, recording, false);
    return recording;
  }

  /**
   * Removes every association with targets that were deleted, recorded in each owner's history. The
   * owner's field is cleared by the caller, which records that change as the owner's update.
   */
  async removeForTargets(m: EntityManager, targetIds: string[]): Promise<BatchRecording> {
    const recording: BatchRecording = { events: [], changes: [] };
    if (!targetIds.length) return recording;
    const [rows] = (await m.query(`DELETE FROM ${this.spec.table} WHERE ${this.spec.target.column} = ANY($1::text[]) RETURNING ${ROW_COLUMNS(this.spec)}`, [
      targetIds,
    ])) as [AssociationRow[], number];
    for (const row of this.ordered(rows)) this.recordRemoved(row, recording, true);
    return recording;
  }

  /**
   * A merge of targets: every association with `from` moves to `to`. An owner already associated with
   * `to` keeps that one, which takes the role of the moved one if it had none, and becomes primary if the
   * moved one was. Idempotent: once moved, nothing is left to move.
   */
  async moveTarget(m: EntityManager, from: string, to: string): Promise<BatchRecording> {
    const { owner, target } = this.spec;
    const recording: BatchRecording = { events: [], changes: [] };
    if (from === to) return recording;
    const moving = (await m.query(`SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} WHERE ${target.column} = $1 ORDER BY ${owner.column} FOR UPDATE`, [
      from,
    ])) as AssociationRow[];
    if (!moving.length) return recording;
    const kept = new Map(
      (
        (await m.query(
          `SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} WHERE ${target.column} = $1 AND ${owner.column} = ANY($2::text[]) FOR UPDATE`,
          [to, moving.map((r) => r.owner)],
        )) as AssociationRow[]
      ).map((r) => [r.owner, r]),
    );
    await m.query(`DELETE FROM ${this.spec.table} WHERE ${target.column} = $1`, [from]);
    for (const row of moving) {
      this.recordRemoved(row, recording, true);
      const existing = kept.get(row.owner);
      if (existing) {
        const next = { ...existing, role: existing.role ?? row.role, is_primary: existing.is_primary || row.is_primary };
        if (next.role === existing.role && next.is_primary === existing.is_primary) continue;
        await m.query(`UPDATE ${this.spec.table} SET role = $3, is_primary = $4 WHERE ${owner.column} = $1 AND ${target.column} = $2`, [
          row.owner,
          to,
          next.role,
          next.is_primary,
        ]);
        this.recordUpdated(existing, next, recording);
      } else {
        const [[added]] = (await m
          .query(
            `INSERT INTO ${this.spec.table} (${owner.column}, ${target.column}, role, is_primary, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${ROW_COLUMNS(this.spec)}`,
            [row.owner, to, row.role, row.is_primary, row.created_at],
          )
          .then((r: AssociationRow[]) => [r])) as [AssociationRow[]];
        this.recordAdded(added, recording);
      }
    }
    return recording;
  }

  /**
   * A merge of owners: the loser's associations move to the winner, except targets the winner has already.
   * A moved primary stays primary only when `primaryTarget`, the winner's field after the merge, names it.
   */
  async moveOwner(m: EntityManager, from: string, to: string, primaryTarget: string | null): Promise<BatchRecording> {
    const { owner, target } = this.spec;
    const recording: BatchRecording = { events: [], changes: [] };
    const moving = (await m.query(`SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} WHERE ${owner.column} = $1 ORDER BY ${target.column}`, [
      from,
    ])) as AssociationRow[];
    const held = new Map(
      ((await m.query(`SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} WHERE ${owner.column} = $1`, [to])) as AssociationRow[]).map((r) => [
        r.target,
        r,
      ]),
    );
    await m.query(`DELETE FROM ${this.spec.table} WHERE ${owner.column} = $1`, [from]);
    for (const row of moving) {
      this.recordRemoved(row, recording, false);
      const existing = held.get(row.target);
      if (existing) {
        const next = { ...existing, role: existing.role ?? row.role, is_primary: existing.is_primary || row.target === primaryTarget };
        if (next.role === existing.role && next.is_primary === existing.is_primary) continue;
        await m.query(`UPDATE ${this.spec.table} SET role = $3, is_primary = $4 WHERE ${owner.column} = $1 AND ${target.column} = $2`, [
          to,
          row.target,
          next.role,
          next.is_primary,
        ]);
        this.recordUpdated(existing, next, recording);
        continue;
      }
      const [[added]] = (await m
        .query(
          `INSERT INTO ${this.spec.table} (${owner.column}, ${target.column}, role, is_primary, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${ROW_COLUMNS(this.spec)}`,
          [to, row.target, row.role, row.is_primary && row.target === primaryTarget, row.created_at],
        )
        .then((r: AssociationRow[]) => [r])) as [AssociationRow[]];
      this.recordAdded(added, recording);
    }
    return recording;
  }

  /** A recording of many owners' associations, split by owner (each batch item records its own). */
  byOwner(recording: BatchRecording): Map<string, BatchRecording> {
    const split = new Map<string, BatchRecording>();
    const of = (owner: string) => split.get(owner) ?? split.set(owner, { events: [], changes: [] }).get(owner)!;
    for (const event of recording.events) of(String(Reflect.get(event.data, this.spec.owner.column))).events.push(event);
    for (const change of recording.changes) of(change.record_id).changes.push(change);
    return split;
  }

  /** The association type as GET /schema lists it. */
  async describe(): Promise<AssociationTypeView> {
    const [row] = (await this.dataSource.query(`SELECT labels, updated_at FROM association_types WHERE type = $1`, [this.spec.type])) as Array<{
      labels: string[];
      updated_at: Date;
    }>;
    const { from, to } = ASSOCIATION_TYPES[this.spec.type];
    return { type: this.spec.type, from, to, labels: row?.labels ?? [], updated_at: (row?.updated_at ?? new Date(0)).toISOString() };
  }

  /** Replaces the labels. Roles already written stay as they are; writes from now on must use a label. */
  async setLabels(labels: string[]): Promise<AssociationTypeView> {
    await this.dataSource.query(
      `INSERT INTO association_types (type, labels, updated_at) VALUES ($1, $2::jsonb, date_trunc('milliseconds', clock_timestamp()))
       ON CONFLICT (type) DO UPDATE SET labels = EXCLUDED.labels, updated_at = EXCLUDED.updated_at`,
      [this.spec.type, JSON.stringify(labels)],
    );
    return this.describe();
  }

  private async checkedRole(m: EntityManager, role: string | null): Promise<string | null> {
    if (role === null) return null;
    const [row] = (await m.query(`SELECT labels FROM association_types WHERE type = $1`, [this.spec.type])) as Array<{ labels: string[] }>;
    const labels = row?.labels ?? [];
    if (labels.length && !labels.includes(role)) {
      throw DomainError.invalid('role', `role must be one of the labels of ${this.spec.type}: ${labels.join(', ')}`);
    }
    return role;
  }

  /** Locks the owner row (so association writes of one owner take turns) and returns its primary target. */
  private async lockOwner(m: EntityManager, ownerId: string): Promise<string | null> {
    if (!isId(ownerId, this.spec.owner.prefix)) throw DomainError.notFound(this.spec.owner.noun, ownerId);
    const [row] = (await m.query(`SELECT ${this.spec.target.field} AS primary FROM ${this.spec.owner.table} WHERE id = $1 FOR UPDATE`, [ownerId])) as Array<{
      primary: string | null;
    }>;
    if (!row) throw DomainError.notFound(this.spec.owner.noun, ownerId);
    return row.primary;
  }

  private async requireOwner(m: EntityManager, ownerId: string): Promise<void> {
    const found =
      isId(ownerId, this.spec.owner.prefix) && ((await m.query(`SELECT 1 FROM ${this.spec.owner.table} WHERE id = $1`, [ownerId])) as unknown[]).length > 0;
    if (!found) throw DomainError.notFound(this.spec.owner.noun, ownerId);
  }

  private async find(m: EntityManager, ownerId: string, targetId: string): Promise<AssociationRow> {
    const [row] = isId(targetId, this.spec.target.prefix)
      ? ((await m.query(
          `SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} WHERE ${this.spec.owner.column} = $1 AND ${this.spec.target.column} = $2 FOR UPDATE`,
          [ownerId, targetId],
        )) as AssociationRow[])
      : [];
    if (!row) {
      throw new DomainError(ErrorCode.NotFound, `The ${this.spec.target.noun} '${targetId}' is not associated with ${this.spec.owner.noun} '${ownerId}'.`);
    }
    return row;
  }

  /** Demotes the current primary of an owner before another becomes primary. */
  private async demote(m: EntityManager, ownerId: string, recording: BatchRecording): Promise<void> {
    const [rows] = (await m.query(
      `UPDATE ${this.spec.table} SET is_primary = false WHERE ${this.spec.owner.column} = $1 AND is_primary RETURNING ${ROW_COLUMNS(this.spec)}`,
      [ownerId],
    )) as [AssociationRow[], number];
    for (const row of rows) this.recordUpdated({ ...row, is_primary: true }, row, recording);
  }

  /** Points the owner's single-id field at its new primary (or none), as the owner's own update. */
  private async setOwnerField(m: EntityManager, ownerId: string, from: string | null, to: string | null, recording: BatchRecording): Promise<void> {
    if (from === to) return;
    const field = this.spec.target.field;
    await m.query(`UPDATE ${this.spec.owner.table} SET ${field} = $2, updated_at = date_trunc('milliseconds', clock_timestamp()) WHERE id = $1`, [ownerId, to]);
    const changes: ChangeSet = { changed: [field], previous: { [field]: from }, current: { [field]: to } };
    recording.events.push(this.spec.ownerUpdated(ownerId, changes));
    const entry = updatedChange(this.spec.owner.object, ownerId, changes);
    if (entry) recording.changes.push(entry);
  }

  private recordAdded(row: AssociationRow, recording: BatchRecording): void {
    recording.events.push(this.draft(this.spec.events.added, this.eventData(row)));
    this.recordHistory(row.owner, row.target, null, stateOf(row), recording);
  }

  private recordUpdated(before: AssociationRow, after: AssociationRow, recording: BatchRecording): void {
    const changed = (['role', 'is_primary'] as const).filter((k) => before[k] !== after[k]);
    if (!changed.length) return;
    recording.events.push(
      this.draft(this.spec.events.updated, {
        ...this.eventData(after),
        changed,
        previous: Object.fromEntries(changed.map((k) => [k, before[k]])),
        current: Object.fromEntries(changed.map((k) => [k, after[k]])),
      }),
    );
    this.recordHistory(after.owner, after.target, stateOf(before), stateOf(after), recording);
  }

  /** `history`: false when the owner itself is going, whose deletion entry says it all. */
  private recordRemoved(row: AssociationRow, recording: BatchRecording, history: boolean): void {
    recording.events.push(this.draft(this.spec.events.removed, this.eventData(row)));
    if (history) this.recordHistory(row.owner, row.target, stateOf(row), null, recording);
  }

  private recordHistory(owner: string, target: string, before: AssociationState | null, after: AssociationState | null, recording: BatchRecording): void {
    const path = `${this.spec.target.path}.${target}`;
    const entry: ChangeDraft | null = updatedChange(this.spec.owner.object, owner, {
      changed: [path],
      previous: { [path]: before },
      current: { [path]: after },
    });
    if (entry) recording.changes.push(entry);
  }

  /** The payload names its columns after the spec (`deal_id`, `contact_id`), so only the spec's event types say which class it is. */
  private draft(type: EventType, data: Record<string, unknown>): EventDraft {
    return { type, data } as EventDraft;
  }

  private eventData(row: AssociationRow): Record<string, unknown> {
    return { [this.spec.owner.column]: row.owner, [this.spec.target.column]: row.target, role: row.role, is_primary: row.is_primary };
  }

  private ordered(rows: AssociationRow[]): AssociationRow[] {
    return [...rows].sort((a, b) => a.owner.localeCompare(b.owner) || a.target.localeCompare(b.target));
  }

  private async page<I extends V>(
    list: string,
    by: 'owner' | 'target',
    id: string,
    query: PageQuery,
    summaries: (ids: string[]) => Promise<Map<string, RelatedSummary>>,
    summaryKey: string,
  ): Promise<Page<I>> {
    const { owner, target } = this.spec;
    const [match, key] = by === 'owner' ? [owner.column, target.column] : [target.column, owner.column];
    const after = this.cursors.decode(list, query.cursor, idKey(by === 'owner' ? target.prefix : owner.prefix));
    const size = pageSize(query);
    const rows = (await this.dataSource.query(
      `SELECT ${ROW_COLUMNS(this.spec)} FROM ${this.spec.table} WHERE ${match} = $1 ${after ? `AND ${key} > $3` : ''} ORDER BY ${key} LIMIT $2`,
      after ? [id, size + 1, after] : [id, size + 1],
    )) as AssociationRow[];
    const other = (row: AssociationRow) => (by === 'owner' ? row.target : row.owner);
    const names = await summaries(rows.slice(0, size).map(other));
    const type = summaryKey as RelatedSummary['type'];
    return toPage(
      this.cursors,
      list,
      rows,
      size,
      other,
      (row) => <I>{ ...this.present(row), [summaryKey]: names.get(other(row)) ?? { type, id: other(row), name: '' } },
    );
  }
}

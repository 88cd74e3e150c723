import { ChangeSet, IdPrefix, newId } from '@crm/common';
import { DealStatus, event, EventDraft, EventType, RequestContext } from '@crm/contracts';
import { ChangeDraft, OutboxService, updatedChange } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Stage } from '../pipelines/stage.entity';
import { Deal } from './deal.entity';

/**
 * API keys carry no team member, so changes made through the API are attributed to this fixed user;
 * the key that made each change is recorded beside it (changed_by_key_id).
 */
export const SERVICE_USER_ID = 'user_00000000000000000000000000';

/** Who made a change: the API key, or null for the service itself (e.g. moving deals off a deleted stage). */
export interface Actor {
  keyId: string | null;
  /** The team member the key belongs to; history names the service user when there is none. */
  userId: string | null;
}

/** Who made a change, from the request: the key, and the team member it belongs to. */
export function actorOf(ctx: RequestContext): Actor {
  return { keyId: ctx.key_id ?? null, userId: ctx.user_id ?? null };
}

/** The status a deal takes when it enters a stage: closed stages decide it; open stages reopen closed deals. */
export function statusAfterEntering(stage: Pick<Stage, 'type'>, current: DealStatus): DealStatus {
  if (stage.type === 'won') return 'won';
  if (stage.type === 'lost') return 'lost';
  return current === 'won' || current === 'lost' ? 'open' : current;
}

/** deal.won or deal.lost when a change closed the deal, or undefined. */
export function statusEvent(deal: Deal, previousStatus: DealStatus | null): EventDraft | undefined {
  if (deal.status === previousStatus) return undefined;
  if (deal.status === 'won') {
    return event(EventType.DealWon, { deal_id: deal.id, pipeline_id: deal.pipelineId, stage_id: deal.stageId, value: deal.value, currency: deal.currency });
  }
  if (deal.status === 'lost') {
    return event(EventType.DealLost, { deal_id: deal.id, pipeline_id: deal.pipelineId, stage_id: deal.stageId, loss_reason: deal.lossReason });
  }
  return undefined;
}

interface MovedRow {
  id: string;
  from_stage_id: string;
  from_pipeline_id: string;
  previous_status: DealStatus;
  status: DealStatus;
  value: string;
  currency: string;
  previous_loss_reason: string | null;
  loss_reason: string | null;
  at: Date;
}

/** The change entry of a deal moved with others: the stage, and the pipeline, status and loss reason where they changed. */
function movedChange(row: MovedRow, target: Stage): ChangeDraft | null {
  const changes: ChangeSet = {
    changed: ['stage_id', 'pipeline_id', 'status', 'loss_reason'],
    previous: { stage_id: row.from_stage_id, pipeline_id: row.from_pipeline_id, status: row.previous_status, loss_reason: row.previous_loss_reason },
    current: { stage_id: target.id, pipeline_id: target.pipelineId, status: row.status, loss_reason: row.loss_reason },
  };
  return updatedChange('deals', row.id, changes);
}

@Injectable()
export class DealStageMover {
  constructor(private readonly outbox: OutboxService) {}

  /**
   * Moves a deal whose row the caller holds locked (SELECT ... FOR UPDATE), so concurrent moves
   * serialize and every history record starts where the previous one ended. Updates `deal` in place and
   * answers the move's events (deal.stage_changed, then deal.won / deal.lost when it closed the deal), for
   * the caller to record with the rest of its write in one statement.
   */
  async move(m: EntityManager, deal: Deal, target: Stage, actor: Actor): Promise<EventDraft[]> {
    const fromStageId = deal.stageId;
    const previousStatus = deal.status;
    const status = statusAfterEntering(target, deal.status);
    const lossReason = status === 'lost' ? deal.lossReason : null;
    // The move, its history record and the clock reading in one statement: both rows carry the same instant.
    const [{ now }] = (await m.query(
      `WITH clock AS (SELECT clock_timestamp() AS at),
            moved AS (
              UPDATE deals SET pipeline_id = $2, stage_id = $3, stage_entered_at = clock.at, status = $4, loss_reason = $5, updated_at = clock.at
              FROM clock WHERE id = $1 RETURNING clock.at AS now),
            history AS (
              INSERT INTO stage_history (id, deal_id, from_stage_id, to_stage_id, changed_at, changed_by, changed_by_key_id)
              SELECT $6::text, $1::text, $7::text, $3::text, moved.now, $8::text, $9::text FROM moved)
       SELECT now FROM moved`,
      [deal.id, target.pipelineId, target.id, status, lossReason, newId(IdPrefix.StageHistory), fromStageId, actor.userId ?? SERVICE_USER_ID, actor.keyId],
    )) as Array<{ now: Date }>;
    deal.pipelineId = target.pipelineId;
    deal.stageId = target.id;
    deal.stageEnteredAt = now;
    deal.status = status;
    deal.lossReason = lossReason;
    deal.updatedAt = now;
    const closed = statusEvent(deal, previousStatus);
    const moved = event(EventType.DealStageChanged, { deal_id: deal.id, from_stage_id: fromStageId, to_stage_id: target.id });
    return closed ? [moved, closed] : [moved];
  }

  /**
   * Moves every deal of a stage or of a pipeline to `target` in three statements, whatever their number:
   * one UPDATE … RETURNING that locks the deals in id order and moves them, one insert of their history,
   * one batch of events (per deal, in id order: deal.stage_changed, then deal.won / deal.lost when the
   * move closed it) with a change entry per deal. Answers how many deals moved.
   */
  async moveAll(m: EntityManager, from: { stageId: string } | { pipelineId: string }, target: Stage, actor: Actor): Promise<number> {
    const [column, key] = 'stageId' in from ? ['stage_id', from.stageId] : ['pipeline_id', from.pipelineId];
    // The SQL form of statusAfterEntering; in SET, d.status is the status before the move.
    const status = target.type === 'open' ? `CASE WHEN d.status IN ('won', 'lost') THEN 'open' ELSE d.status END` : `'${target.type}'`;
    const [moved] = (await m.query(
      `WITH old AS (SELECT id, pipeline_id, stage_id, status, loss_reason FROM deals WHERE ${column} = $1 ORDER BY id FOR UPDATE),
            clock AS (SELECT clock_timestamp() AS at)
       UPDATE deals d SET pipeline_id = $2, stage_id = $3, stage_entered_at = clock.at, status = ${status},
              loss_reason = CASE WHEN ${status} = 'lost' THEN d.loss_reason END, updated_at = clock.at
       FROM old, clock WHERE d.id = old.id
       RETURNING d.id, old.stage_id AS from_stage_id, old.pipeline_id AS from_pipeline_id, old.status AS previous_status, d.status,
                 d.value::text AS value, d.currency, old.loss_reason AS previous_loss_reason, d.loss_reason, clock.at`,
      [key, target.pipelineId, target.id],
    )) as [MovedRow[], number];
    if (!moved.length) return 0;
    moved.sort((a, b) => (a.id < b.id ? -1 : 1));
    await m.query(
      `INSERT INTO stage_history (id, deal_id, from_stage_id, to_stage_id, changed_at, changed_by, changed_by_key_id)
       SELECT h.id, h.deal_id, h.from_stage_id, $4, $5, $6, $7 FROM unnest($1::text[], $2::text[], $3::text[]) AS h(id, deal_id, from_stage_id)`,
      [
        moved.map(() => newId(IdPrefix.StageHistory)),
        moved.map((r) => r.id),
        moved.map((r) => r.from_stage_id),
        target.id,
        moved[0].at,
        actor.userId ?? SERVICE_USER_ID,
        actor.keyId,
      ],
    );
    const events: EventDraft[] = [];
    for (const row of moved) {
      events.push(event(EventType.DealStageChanged, { deal_id: row.id, from_stage_id: row.from_stage_id, to_stage_id: target.id }));
      if (row.status === row.previous_status) continue;
      if (row.status === 'won') {
        events.push(
          event(EventType.DealWon, { deal_id: row.id, pipeline_id: target.pipelineId, stage_id: target.id, value: Number(row.value), currency: row.currency }),
        );
      } else if (row.status === 'lost') {
        events.push(event(EventType.DealLost, { deal_id: row.id, pipeline_id: target.pipelineId, stage_id: target.id, loss_reason: row.loss_reason }));
      }
    }
    await this.outbox.record(m, { events, changes: moved.map((row) => movedChange(row, target)) });
    return moved.length;
  }
}

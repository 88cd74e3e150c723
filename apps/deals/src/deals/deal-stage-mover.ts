import { IdPrefix, newId } from '@crm/common';
import { DealLostData, DealStageChangedData, DealStatus, DealWonData, EventType } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Stage } from '../pipelines/stage.entity';
import { Deal } from './deal.entity';
import { StageHistory } from './stage-history.entity';

/**
 * API keys carry no team member, so changes made through the API are attributed to this fixed user;
 * the key that made each change is recorded beside it (changed_by_key_id).
 */
export const SERVICE_USER_ID = 'user_00000000000000000000000000';

/** Who made a change: the API key, or null for the service itself (e.g. moving deals off a deleted stage). */
export interface Actor {
  keyId: string | null;
}

/** The status a deal takes when it enters a stage: closed stages decide it; open stages reopen closed deals. */
export function statusAfterEntering(stage: Pick<Stage, 'type'>, current: DealStatus): DealStatus {
  if (stage.type === 'won') return 'won';
  if (stage.type === 'lost') return 'lost';
  return current === 'won' || current === 'lost' ? 'open' : current;
}

@Injectable()
export class DealStageMover {
  constructor(private readonly outbox: OutboxService) {}

  /** Writes the initial placement of a newly inserted deal. */
  async recordPlacement(m: EntityManager, deal: Deal, actor: Actor): Promise<void> {
    await this.writeHistory(m, deal.id, null, deal.stageId, deal.stageEnteredAt, actor);
  }

  /**
   * Moves a deal whose row the caller holds locked (SELECT ... FOR UPDATE), so concurrent moves
   * serialize and every history record starts where the previous one ended. Updates `deal` in place.
   * `statusOverride` lets an update that also sets status have the last word.
   */
  async move(m: EntityManager, deal: Deal, target: Stage, actor: Actor, statusOverride?: DealStatus): Promise<void> {
    const fromStageId = deal.stageId;
    const previousStatus = deal.status;
    const status = statusOverride ?? statusAfterEntering(target, deal.status);
    const [{ now }] = (await m.query(`SELECT clock_timestamp() AS now`)) as Array<{ now: Date }>;
    deal.pipelineId = target.pipelineId;
    deal.stageId = target.id;
    deal.stageEnteredAt = now;
    deal.status = status;
    if (status !== 'lost') deal.lossReason = null;
    deal.updatedAt = now;
    await m.update(Deal, { id: deal.id }, {
      pipelineId: deal.pipelineId,
      stageId: deal.stageId,
      stageEnteredAt: now,
      status,
      lossReason: deal.lossReason,
      updatedAt: now,
    });
    await this.writeHistory(m, deal.id, fromStageId, target.id, now, actor);
    await this.outbox.append<DealStageChangedData>(m, EventType.DealStageChanged, {
      deal_id: deal.id,
      from_stage_id: fromStageId,
      to_stage_id: target.id,
    });
    await this.announceStatus(m, deal, previousStatus);
  }

  /** deal.won / deal.lost when a change closed the deal. */
  async announceStatus(m: EntityManager, deal: Deal, previousStatus: DealStatus | null): Promise<void> {
    if (deal.status === previousStatus) return;
    if (deal.status === 'won') {
      await this.outbox.append<DealWonData>(m, EventType.DealWon, {
        deal_id: deal.id,
        pipeline_id: deal.pipelineId,
        stage_id: deal.stageId,
        value: deal.value,
        currency: deal.currency,
      });
    } else if (deal.status === 'lost') {
      await this.outbox.append<DealLostData>(m, EventType.DealLost, {
        deal_id: deal.id,
        pipeline_id: deal.pipelineId,
        stage_id: deal.stageId,
        loss_reason: deal.lossReason,
      });
    }
  }

  private async writeHistory(m: EntityManager, dealId: string, from: string | null, to: string, at: Date, actor: Actor): Promise<void> {
    await m.insert(StageHistory, {
      id: newId(IdPrefix.StageHistory),
      dealId,
      fromStageId: from,
      toStageId: to,
      changedAt: at,
      changedBy: SERVICE_USER_ID,
      changedByKeyId: actor.keyId,
    });
  }
}

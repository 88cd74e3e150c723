import {
  ChangeSet,
  CursorCodec,
  diffFields,
  DomainError,
  fieldSpecs,
  IdPrefix,
  isForeignKeyViolation,
  isId,
  isUniqueViolation,
  keysetPage,
  newId,
  Page,
  SortablePageQuery,
} from '@crm/common';
import {
  AddStageDto,
  CreatePipelineDto,
  event,
  EventType,
  MAX_STAGES_PER_PIPELINE,
  PipelineView,
  ReorderStagesDto,
  StageInputDto,
  UpdatePipelineDto,
  RequestContext,
} from '@crm/contracts';
import { createdChange, deletedChange, OutboxService, updatedChange } from '@crm/messaging';
import { BuiltInCustomFieldsService } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Actor, DealStageMover } from '../deals/deal-stage-mover';
import { Pipeline } from './pipeline.entity';
import { presentPipeline, presentStages } from './pipeline.presenter';
import { Stage } from './stage.entity';

/** Serializes every change of which pipeline is the default, per schema. */
const DEFAULT_PIPELINE_LOCK = `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.default_pipeline'))`;

/** Fields a PATCH changes directly; is_default moves the default and is handled apart. */
const PIPELINE_FIELDS = fieldSpecs<Pipeline>({ name: 'value', metadata: 'json', custom_fields: 'json' });

@Injectable()
export class PipelinesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly mover: DealStageMover,
    private readonly customFields: BuiltInCustomFieldsService,
  ) {}

  async create(ctx: RequestContext, dto: CreatePipelineDto): Promise<PipelineView> {
    const stages = orderForCreate(dto.stages ?? []);
    const names = new Set<string>();
    stages.forEach((stage) => {
      const key = stage.name.toLowerCase();
      if (names.has(key)) throw DomainError.invalid('stages', `stage names must be unique within a pipeline; '${stage.name}' appears twice`);
      names.add(key);
    });
    const id = newId(IdPrefix.Pipeline);
    await this.write(async (m) => {
      await m.query(DEFAULT_PIPELINE_LOCK);
      const hasDefault = await m.exists(Pipeline, { where: { isDefault: true } });
      // The first pipeline is the default whatever was asked: deals always have a pipeline to fall into.
      const isDefault = dto.is_default === true || !hasDefault;
      if (isDefault && hasDefault) await this.clearDefault(m);
      const now = await transactionNow(m);
      const customFields = await this.customFields.values(m, ctx, 'pipelines', id, dto.custom_fields);
      await m.insert(Pipeline, {
        id,
        name: dto.name,
        isDefault,
        metadata: (dto.metadata ?? {}) as Pipeline['metadata'],
        customFields: customFields as Pipeline['customFields'],
        createdAt: now,
        updatedAt: now,
      });
      // All stages in one INSERT.
      if (stages.length)
        await m.insert(
          Stage,
          stages.map((stage, position) => stageRow(id, stage, position, now)),
        );
      await this.outbox.record(m, {
        events: [event(EventType.PipelineCreated, { pipeline_id: id })],
        changes: [createdChange('pipelines', id, presentPipeline(await this.load(m, id)))],
      });
    });
    return this.get(id);
  }

  async list(query: SortablePageQuery): Promise<Page<PipelineView>> {
    const { read } = keysetPage(this.cursors, this.dataSource.getRepository(Pipeline), 'p', 'pipelines', query);
    return read(presentPipeline, (pipelines) => this.attachStages(this.dataSource.manager, pipelines));
  }

  async get(id: string): Promise<PipelineView> {
    return presentPipeline(await this.load(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: UpdatePipelineDto): Promise<PipelineView> {
    await this.write(async (m) => {
      if (dto.is_default !== undefined) await m.query(DEFAULT_PIPELINE_LOCK);
      if (dto.custom_fields !== undefined) await this.customFields.lockDefinitions(m, 'pipelines');
      const pipeline = await this.lock(m, id);
      const input: Record<string, unknown> = { ...dto };
      input.custom_fields = await this.customFields.values(m, ctx, 'pipelines', id, dto.custom_fields, pipeline.customFields ?? {});
      const { set, changes } = diffFields(pipeline, input, PIPELINE_FIELDS);
      if (dto.is_default !== undefined && dto.is_default !== pipeline.isDefault) {
        if (!dto.is_default) {
          throw DomainError.invalid('is_default', 'There must be a default pipeline: set is_default: true on another pipeline instead.');
        }
        await this.clearDefault(m);
        changes.changed.push('is_default');
        changes.previous.is_default = false;
        changes.current.is_default = true;
      }
      if (!changes.changed.length) return;
      await m.update(
        Pipeline,
        { id },
        {
          ...set,
          ...(changes.changed.includes('is_default') ? { isDefault: true } : {}),
          updatedAt: await transactionNow(m),
        },
      );
      await this.recordUpdate(m, [{ id, changes }]);
    });
    return this.get(id);
  }

  /** Deleting a pipeline that holds deals needs `move_to_stage_id`, a stage of another pipeline. */
  async remove(id: string, moveToStageId: string | undefined, actor: Actor): Promise<void> {
    await this.write(async (m) => {
      await m.query(DEFAULT_PIPELINE_LOCK);
      const pipeline = await this.lock(m, id);
      // As it was before its deals move: the last values its history keeps.
      await this.attachStages(m, [pipeline]);
      const target = moveToStageId === undefined ? undefined : await this.moveTarget(m, moveToStageId);
      if (target && target.pipelineId === id) {
        throw DomainError.invalid('move_to_stage_id', 'move_to_stage_id must be a stage of another pipeline.');
      }
      await this.evacuate(m, { pipelineId: id }, target, actor, `Pipeline '${id}' still holds deals`);
      await this.deleteChecked(m, () => m.delete(Pipeline, { id }), `Pipeline '${id}' still holds deals`);
      await this.outbox.record(m, {
        events: [event(EventType.PipelineDeleted, { pipeline_id: id })],
        changes: [deletedChange('pipelines', id, presentPipeline(pipeline))],
      });
      if (pipeline.isDefault) {
        // Another pipeline inherits the default, the oldest one, so there always is one while any exist.
        const [heirs] = (await m.query(`UPDATE pipelines SET is_default = true, updated_at = now()
          WHERE id = (SELECT id FROM pipelines ORDER BY id LIMIT 1) RETURNING id`)) as [Array<{ id: string }>, number];
        await this.recordUpdate(
          m,
          heirs.map((heir) => ({ id: heir.id, changes: defaultMoved(false, true) })),
        );
      }
    });
  }

  async addStage(id: string, dto: AddStageDto): Promise<PipelineView> {
    await this.write(async (m) => {
      await this.lock(m, id);
      const before = await this.stagesOf(m, id);
      const count = before.length;
      if (count >= MAX_STAGES_PER_PIPELINE) {
        throw DomainError.conflict(`A pipeline holds at most ${MAX_STAGES_PER_PIPELINE} stages.`);
      }
      const position = dto.position ?? count;
      if (position > count) {
        throw DomainError.invalid('position', `position must be between 0 and ${count} (the number of stages)`);
      }
      await m.query(`UPDATE stages SET position = position + 1 WHERE pipeline_id = $1 AND position >= $2`, [id, position]);
      const now = await transactionNow(m);
      try {
        await m.insert(Stage, stageRow(id, dto, position, now));
      } catch (err) {
        throw this.stageNameConflict(err, dto.name);
      }
      await this.touch(m, id, now, before);
    });
    return this.get(id);
  }

  /** `stage_ids` must name every stage of the pipeline exactly once; anything else is a 409 naming the ids. */
  async reorderStages(id: string, dto: ReorderStagesDto): Promise<PipelineView> {
    await this.write(async (m) => {
      await this.lock(m, id);
      const stages = await m.find(Stage, { where: { pipelineId: id }, order: { position: 'ASC' } });
      const existing = new Set(stages.map((s) => s.id));
      const seen = new Set<string>();
      const duplicates = new Set<string>();
      const unknown: string[] = [];
      for (const stageId of dto.stage_ids) {
        if (seen.has(stageId)) duplicates.add(stageId);
        seen.add(stageId);
        if (!existing.has(stageId) && !unknown.includes(stageId)) unknown.push(stageId);
      }
      const missing = stages.filter((s) => !seen.has(s.id)).map((s) => s.id);
      const details = [
        ...missing.map((sid) => ({ field: 'stage_ids', code: 'missing_stage', message: `stage '${sid}' of this pipeline is missing` })),
        ...unknown.map((sid) => ({ field: 'stage_ids', code: 'unknown_stage', message: `'${sid}' is not a stage of this pipeline` })),
        ...[...duplicates].map((sid) => ({ field: 'stage_ids', code: 'duplicate_stage', message: `stage '${sid}' is listed more than once` })),
      ];
      if (details.length) {
        const parts = [
          missing.length ? `missing ${missing.join(', ')}` : '',
          unknown.length ? `not in this pipeline ${unknown.join(', ')}` : '',
          duplicates.size ? `listed twice ${[...duplicates].join(', ')}` : '',
        ].filter(Boolean);
        throw DomainError.conflict(`stage_ids must list every stage of the pipeline exactly once: ${parts.join('; ')}.`, details);
      }
      const order = dto.stage_ids;
      if (order.every((sid, i) => stages[i].id === sid)) return;
      await m.query(
        `UPDATE stages SET position = o.position - 1 FROM unnest($1::text[]) WITH ORDINALITY AS o(id, position) WHERE stages.id = o.id AND stages.pipeline_id = $2`,
        [order, id],
      );
      await this.touch(m, id, await transactionNow(m), stages);
    });
    return this.get(id);
  }

  /** Deleting a stage that holds deals needs `move_to_stage_id`, another stage of the same pipeline. */
  async removeStage(id: string, stageId: string, moveToStageId: string | undefined, actor: Actor): Promise<void> {
    await this.write(async (m) => {
      await this.lock(m, id);
      const before = await this.stagesOf(m, id);
      const stage = isId(stageId, IdPrefix.Stage) ? before.find((s) => s.id === stageId) : undefined;
      if (!stage) throw DomainError.notFound('stage', stageId);
      const target = moveToStageId === undefined ? undefined : await this.moveTarget(m, moveToStageId);
      if (target && (target.pipelineId !== id || target.id === stageId)) {
        throw DomainError.invalid('move_to_stage_id', 'move_to_stage_id must be another stage of the same pipeline.');
      }
      await this.evacuate(m, { stageId }, target, actor, `Stage '${stageId}' still holds deals`);
      await this.deleteChecked(m, () => m.delete(Stage, { id: stageId }), `Stage '${stageId}' still holds deals`);
      // Keep positions dense (0..n-1).
      await m.query(`UPDATE stages SET position = position - 1 WHERE pipeline_id = $1 AND position > $2`, [id, stage.position]);
      await this.touch(m, id, await transactionNow(m), before);
    });
  }

  /** Pipeline with its stages; 404 when absent. */
  async load(m: EntityManager, id: string): Promise<Pipeline> {
    const pipeline = isId(id, IdPrefix.Pipeline) ? await m.findOne(Pipeline, { where: { id } }) : null;
    if (!pipeline) throw DomainError.notFound('pipeline', id);
    await this.attachStages(m, [pipeline]);
    return pipeline;
  }

  private async attachStages(m: EntityManager, pipelines: Pipeline[]): Promise<void> {
    if (!pipelines.length) return;
    const stages = await m
      .createQueryBuilder(Stage, 's')
      .where('s.pipeline_id IN (:...ids)', { ids: pipelines.map((p) => p.id) })
      .orderBy('s.position', 'ASC')
      .getMany();
    for (const pipeline of pipelines) pipeline.stages = stages.filter((s) => s.pipelineId === pipeline.id);
  }

  /** Locks the pipeline row: stage changes of one pipeline run one at a time. */
  private async lock(m: EntityManager, id: string): Promise<Pipeline> {
    const pipeline = isId(id, IdPrefix.Pipeline)
      ? await m.createQueryBuilder(Pipeline, 'p').setLock('pessimistic_write').where('p.id = :id', { id }).getOne()
      : null;
    if (!pipeline) throw DomainError.notFound('pipeline', id);
    return pipeline;
  }

  private async moveTarget(m: EntityManager, stageId: string): Promise<Stage> {
    const stage = isId(stageId, IdPrefix.Stage) ? await m.findOne(Stage, { where: { id: stageId } }) : null;
    if (!stage) throw DomainError.invalid('move_to_stage_id', `No stage with id '${stageId}'.`);
    return stage;
  }

  /** Moves every deal matching `where` to `target`, or refuses when there are deals and no target. */
  private async evacuate(m: EntityManager, from: { pipelineId: string } | { stageId: string }, target: Stage | undefined, actor: Actor, refusal: string) {
    if (!target) {
      const [column, key] = 'stageId' in from ? ['stage_id', from.stageId] : ['pipeline_id', from.pipelineId];
      const held: unknown[] = await m.query(`SELECT 1 FROM deals WHERE ${column} = $1 LIMIT 1`, [key]);
      if (held.length) throw DomainError.conflict(`${refusal}: move or delete them first, or pass move_to_stage_id.`);
      return;
    }
    await this.mover.moveAll(m, from, target, actor);
  }

  /** A deal created concurrently still blocks the delete: the foreign key refuses, and that is a 409 too. */
  private async deleteChecked(m: EntityManager, remove: () => Promise<unknown>, refusal: string): Promise<void> {
    try {
      await remove();
    } catch (err) {
      if (isForeignKeyViolation(err)) throw DomainError.conflict(`${refusal}: move or delete them first, or pass move_to_stage_id.`);
      throw err;
    }
  }

  private async clearDefault(m: EntityManager): Promise<void> {
    const previous = (await m.query(`UPDATE pipelines SET is_default = false, updated_at = now() WHERE is_default RETURNING id`)) as [
      Array<{ id: string }>,
      number,
    ];
    await this.recordUpdate(
      m,
      (previous[0] ?? []).map((row) => ({ id: row.id, changes: defaultMoved(true, false) })),
    );
  }

  private async stagesOf(m: EntityManager, id: string): Promise<Stage[]> {
    return m.find(Stage, { where: { pipelineId: id }, order: { position: 'ASC' } });
  }

  /** A change of the pipeline's stages (added, reordered, deleted): `stages` before and after, as the API shows them. */
  private async touch(m: EntityManager, id: string, now: Date, before: Stage[]): Promise<void> {
    await m.update(Pipeline, { id }, { updatedAt: now });
    const changes: ChangeSet = {
      changed: ['stages'],
      previous: { stages: presentStages(before) },
      current: { stages: presentStages(await this.stagesOf(m, id)) },
    };
    await this.recordUpdate(m, [{ id, changes }]);
  }

  /** pipeline.updated and its change entry, for each pipeline an update changed. */
  private async recordUpdate(m: EntityManager, updates: Array<{ id: string; changes: ChangeSet }>): Promise<void> {
    await this.outbox.record(m, {
      events: updates.map(({ id, changes }) => event(EventType.PipelineUpdated, { pipeline_id: id, ...changes })),
      changes: updates.map(({ id, changes }) => updatedChange('pipelines', id, changes)),
    });
  }

  private stageNameConflict(err: unknown, name: string): unknown {
    if (isUniqueViolation(err, 'stages_name_unique')) {
      return DomainError.conflict(`This pipeline already has a stage named '${name}'.`, [
        { field: 'name', code: 'duplicate', message: `This pipeline already has a stage named '${name}'.` },
      ]);
    }
    return err;
  }

  private async write(work: (m: EntityManager) => Promise<void>): Promise<void> {
    await this.dataSource.transaction(work);
  }
}

function defaultMoved(from: boolean, to: boolean): ChangeSet {
  return { changed: ['is_default'], previous: { is_default: from }, current: { is_default: to } };
}

/** Stages with a position go where it says (stable); the rest follow in the order sent. Positions are then 0..n-1. */
export function orderForCreate(stages: StageInputDto[]): StageInputDto[] {
  const placed = stages.map((stage, index) => ({ stage, index })).filter((s) => s.stage.position !== undefined);
  placed.sort((a, b) => a.stage.position! - b.stage.position! || a.index - b.index);
  return [...placed.map((p) => p.stage), ...stages.filter((s) => s.position === undefined)];
}

function stageRow(pipelineId: string, stage: StageInputDto, position: number, now: Date): Stage {
  return {
    id: newId(IdPrefix.Stage),
    pipelineId,
    name: stage.name,
    type: stage.type,
    position,
    color: stage.color?.toLowerCase() ?? null,
    probability: stage.probability ?? null,
    createdAt: now,
  };
}

async function transactionNow(m: EntityManager): Promise<Date> {
  const [{ now }] = (await m.query(`SELECT clock_timestamp() AS now`)) as Array<{ now: Date }>;
  return now;
}

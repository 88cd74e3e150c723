import type { PipelineView, StageView } from '@crm/contracts';
import { Pipeline } from './pipeline.entity';
import { Stage } from './stage.entity';
import { effectiveProbabilities } from './stage-probability';

export function presentStages(stages: readonly Stage[]): StageView[] {
  const ordered = [...stages].sort((a, b) => a.position - b.position);
  const probabilities = effectiveProbabilities(ordered);
  return ordered.map((stage, i) => ({
    id: stage.id,
    name: stage.name,
    type: stage.type,
    position: stage.position,
    color: stage.color,
    probability: probabilities[i],
  }));
}

export function presentPipeline(pipeline: Pipeline): PipelineView {
  return {
    id: pipeline.id,
    name: pipeline.name,
    is_default: pipeline.isDefault,
    stages: presentStages(pipeline.stages ?? []),
    metadata: pipeline.metadata,
    custom_fields: pipeline.customFields ?? {},
    created_at: pipeline.createdAt.toISOString(),
    updated_at: pipeline.updatedAt.toISOString(),
  };
}

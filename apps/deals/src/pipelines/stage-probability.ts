import type { StageType } from '@crm/contracts';

interface Placed {
  type: StageType;
  position: number;
  probability: number | null;
}

/**
 * The win probability of each stage, in the order given. A stored probability is used as is; otherwise
 * won stages are 1.0, lost stages 0.0, and open stages are spread evenly over (0, 1) by their rank among
 * the open stages: with n open stages the k-th (from 1) is k / (n + 1), rounded to two decimals.
 */
export function effectiveProbabilities(stages: readonly Placed[]): number[] {
  const openRanks = new Map<Placed, number>();
  const open = stages.filter((s) => s.type === 'open').sort((a, b) => a.position - b.position);
  open.forEach((s, i) => openRanks.set(s, i + 1));
  return stages.map((stage) => {
    if (stage.probability !== null) return stage.probability;
    if (stage.type === 'won') return 1;
    if (stage.type === 'lost') return 0;
    return Math.round(((openRanks.get(stage) ?? 1) / (open.length + 1)) * 100) / 100;
  });
}

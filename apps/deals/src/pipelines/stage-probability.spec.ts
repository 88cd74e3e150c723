import { effectiveProbabilities } from './stage-probability';

describe('effectiveProbabilities', () => {
  it('spreads open stages evenly and fixes won at 1 and lost at 0', () => {
    const stages = [
      { type: 'open' as const, position: 0, probability: null },
      { type: 'open' as const, position: 1, probability: null },
      { type: 'open' as const, position: 2, probability: null },
      { type: 'won' as const, position: 3, probability: null },
      { type: 'lost' as const, position: 4, probability: null },
    ];
    expect(effectiveProbabilities(stages)).toEqual([0.25, 0.5, 0.75, 1, 0]);
  });

  it('keeps a stored probability and ranks open stages by position, not by array order', () => {
    const stages = [
      { type: 'open' as const, position: 2, probability: null },
      { type: 'open' as const, position: 0, probability: 0.05 },
      { type: 'open' as const, position: 1, probability: null },
    ];
    expect(effectiveProbabilities(stages)).toEqual([0.75, 0.05, 0.5]);
  });
});

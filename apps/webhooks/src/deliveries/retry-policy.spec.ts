import { afterFailure } from './retry-policy';

describe('retry policy', () => {
  const schedule = [1000, 10_000];

  it('follows the schedule, one delay per failed attempt, then gives up', () => {
    expect(afterFailure(1, schedule, 0)).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(afterFailure(2, schedule, 0)).toEqual({ kind: 'retry', delayMs: 10_000 });
    expect(afterFailure(3, schedule, 0)).toEqual({ kind: 'give_up' });
  });

  it('spreads each delay over ±jitter', () => {
    expect(afterFailure(1, schedule, 0.2, () => 0)).toEqual({ kind: 'retry', delayMs: 800 });
    expect(afterFailure(1, schedule, 0.2, () => 1)).toEqual({ kind: 'retry', delayMs: 1200 });
    expect(afterFailure(2, schedule, 0.2, () => 0.5)).toEqual({ kind: 'retry', delayMs: 10_000 });
  });

  it('gives up at once with an empty schedule', () => {
    expect(afterFailure(1, [], 0.2)).toEqual({ kind: 'give_up' });
  });
});

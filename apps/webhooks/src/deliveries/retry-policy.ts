/**
 * What happens after a failed attempt, given how many attempts of this event have failed so far
 * (including this one): wait and retry, or give the event up once the schedule is used up.
 */
export type AfterFailure = { kind: 'retry'; delayMs: number } | { kind: 'give_up' };

export function afterFailure(failedAttempts: number, scheduleMs: readonly number[], jitter: number, random: () => number = Math.random): AfterFailure {
  const base = scheduleMs[failedAttempts - 1];
  if (base === undefined) return { kind: 'give_up' };
  const spread = 1 + jitter * (2 * random() - 1);
  return { kind: 'retry', delayMs: Math.max(1, Math.round(base * spread)) };
}

/** How often a consumer tries one event before it parks it, and how long it waits in between. */
export interface RetryPolicy {
  maxAttempts: number;
  /** The wait after the first failure; it doubles after each further one, up to maxDelayMs. */
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, firstDelayMs: 200, maxDelayMs: 5000 };

export class StoppedWhileRetrying extends Error {
  constructor() {
    super('consumer stopped while retrying');
  }
}

/**
 * Handles a batch as one; if that fails, handles its items one by one, in order, each up to
 * `maxAttempts` times, and parks an item that still fails so the items after it go on. `pause`
 * answers false once the consumer is stopping, which abandons the batch unacknowledged.
 */
export async function handleOrPark<T>(
  items: T[],
  handle: (items: T[]) => Promise<void>,
  park: (item: T, err: unknown, attempts: number) => Promise<void>,
  policy: RetryPolicy,
  pause: (ms: number) => Promise<boolean>,
  onFailure?: (err: unknown, attempt: number) => void,
): Promise<void> {
  if (!items.length) return;
  if (items.length > 1) {
    try {
      await handle(items);
      return;
    } catch (err) {
      onFailure?.(err, 0);
      if (!(await pause(policy.firstDelayMs))) throw new StoppedWhileRetrying();
    }
  }
  for (const item of items) {
    let delay = policy.firstDelayMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await handle([item]);
        break;
      } catch (err) {
        onFailure?.(err, attempt);
        if (attempt >= policy.maxAttempts) {
          await park(item, err, attempt);
          break;
        }
        if (!(await pause(delay))) throw new StoppedWhileRetrying();
        delay = Math.min(delay * 2, policy.maxDelayMs);
      }
    }
  }
}

/** Runs `work` until it succeeds (parking must not lose an event), backing off; throws once stopping. */
export async function retryUntilDone(work: () => Promise<void>, pause: (ms: number) => Promise<boolean>, onFailure?: (err: unknown) => void): Promise<void> {
  let delay = 100;
  for (;;) {
    try {
      await work();
      return;
    } catch (err) {
      onFailure?.(err);
      if (!(await pause(delay))) throw new StoppedWhileRetrying();
      delay = Math.min(delay * 2, 5000);
    }
  }
}

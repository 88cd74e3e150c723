import type { ErasureStepReply, ErasureTarget } from '@crm/contracts';
import { withoutDeadline } from '@crm/messaging';

/**
 * A service's step of an erasure runs to its end whatever the caller's wait: a large subject (ten thousand
 * history entries, as many stream messages) takes longer than one call's RPC_TIMEOUT_MS, and under the
 * request's deadline its queries would be cut off and rolled back on every ask, so it would never finish.
 * The caller asks again until it answers (ErasuresService); a new ask of a step still running here joins
 * it instead of starting another. After a restart, the ledger (erasure-ledger.ts) keeps what was done.
 */
export class ErasureRuns {
  private readonly running = new Map<string, Promise<ErasureStepReply>>();

  run(target: ErasureTarget, work: () => Promise<ErasureStepReply>): Promise<ErasureStepReply> {
    let run = this.running.get(target.erasure_id);
    if (!run) {
      run = withoutDeadline(work).finally(() => this.running.delete(target.erasure_id));
      this.running.set(target.erasure_id, run);
    }
    return run;
  }
}

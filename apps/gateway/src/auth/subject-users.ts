import { EXTERNAL_ID_MAX, Ops } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';

/** How long a subject's team member (or the lack of one) is taken from memory: a changed external_id shows within this. */
export const SUBJECT_CACHE_MS = 10_000;
const MAX_REMEMBERED_SUBJECTS = 10_000;

interface Remembered {
  userId: string | null;
  at: number;
}

/**
 * The team member a bearer token's subject stands for: the user whose external_id equals the `sub`
 * (docs/users.md), asked of the contacts service, which owns team members, and remembered for
 * SUBJECT_CACHE_MS so a client's burst of requests costs one question. If the service cannot answer,
 * a remembered answer of any age is used rather than naming the wrong actor; without one the request fails.
 */
@Injectable()
export class SubjectUsers {
  private readonly remembered = new Map<string, Remembered>();
  private readonly pending = new Map<string, Promise<string | null>>();

  constructor(private readonly rpc: RpcCaller) {}

  async userOf(subject: string, requestId: string): Promise<string | null> {
    if (subject.length > EXTERNAL_ID_MAX) return null; // no external_id can be that long
    const entry = this.remembered.get(subject);
    if (entry && Date.now() - entry.at < SUBJECT_CACHE_MS) return entry.userId;
    let asking = this.pending.get(subject);
    if (!asking) {
      asking = this.ask(subject, requestId).finally(() => this.pending.delete(subject));
      this.pending.set(subject, asking);
    }
    try {
      return await asking;
    } catch (err) {
      if (entry) return entry.userId;
      throw err;
    }
  }

  private async ask(subject: string, requestId: string): Promise<string | null> {
    const reply = await this.rpc.call(Ops.contactsInternal.userForSubject, { request_id: requestId }, { body: { external_id: subject } });
    const userId = reply?.user_id ?? null;
    this.remembered.delete(subject); // re-inserted last: the Map's order is the order of last lookup
    this.remembered.set(subject, { userId, at: Date.now() });
    if (this.remembered.size > MAX_REMEMBERED_SUBJECTS) this.remembered.delete(this.remembered.keys().next().value!);
    return userId;
  }
}

import { DomainError } from '@crm/common';
import { Ops, RequestContext } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';

/** Team members live in the contacts service; a key's user_id is checked there. */
@Injectable()
export class TeamDirectory {
  constructor(private readonly rpc: RpcCaller) {}

  async requireUser(ctx: RequestContext, userId: string): Promise<void> {
    const reply = await this.rpc.call(Ops.contactsInternal.resolve, ctx, { body: { user_ids: [userId] } });
    if (!(reply?.users ?? []).some((u) => u.id === userId)) throw DomainError.invalid('user_id', `No user with id '${userId}'.`, 'not_found');
  }
}

import { DomainError } from '@crm/common';
import { ContactsInternalRpc, RequestContext, ResolveContactsReply, ResolveContactsRequest, internalRequest } from '@crm/contracts';
import { CRM_RPC } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';

/** Team members live in the contacts service; a key's user_id is checked there. */
@Injectable()
export class TeamDirectory {
  constructor(@Inject(CRM_RPC) private readonly rpc: ClientProxy) {}

  async requireUser(ctx: RequestContext, userId: string): Promise<void> {
    const body: ResolveContactsRequest = { user_ids: [userId] };
    const reply = await firstValueFrom(this.rpc.send<ResolveContactsReply>(ContactsInternalRpc.Resolve, internalRequest(ctx, body)));
    if (!(reply?.users ?? []).some((u) => u.id === userId)) throw DomainError.invalid('user_id', `No user with id '${userId}'.`, 'not_found');
  }
}

import { Ops, RequestContext, ResolveContactsReply, ResolveContactsRequest } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';

/** Contacts, companies and users (owners) belong to the contacts service; this asks it whether ids exist and what they are called. */
@Injectable()
export class ContactsDirectory {
  constructor(private readonly rpc: RpcCaller) {}

  /** Which of many contact, company and user ids exist, with their names, in one request (a batch write's references). */
  async resolveMany(ctx: RequestContext, ids: { contact_ids: string[]; company_ids: string[]; user_ids: string[] }): Promise<Required<ResolveContactsReply>> {
    const body: ResolveContactsRequest = Object.fromEntries(
      Object.entries(ids)
        .filter(([, list]) => list.length)
        .map(([k, list]) => [k, [...new Set(list)]]),
    );
    if (!Object.keys(body).length) return { contacts: [], companies: [], users: [] };
    const reply = await this.rpc.call(Ops.contactsInternal.resolve, ctx, { body });
    return { contacts: reply?.contacts ?? [], companies: reply?.companies ?? [], users: reply?.users ?? [] };
  }
}

import { BuiltInSlug, builtInEntry, Ops, RequestContext, ResolveContactsReply, ResolveContactsRequest } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { RemoteRecords } from '@crm/records';
import { Injectable } from '@nestjs/common';

/** Contacts, companies and users (owners) belong to the contacts service; this asks it whether ids exist and what they are called. */
@Injectable()
export class ContactsDirectory implements RemoteRecords {
  constructor(private readonly rpc: RpcCaller) {}

  /** Which of the ids named for objects the contacts service keeps exist, asked as each object's entry says (`resolvedAs`). */
  async existingOf(ctx: RequestContext, wanted: ReadonlyMap<BuiltInSlug, string[]>): Promise<Map<BuiltInSlug, Set<string>>> {
    const ids = { contact_ids: [] as string[], company_ids: [] as string[], user_ids: [] as string[] };
    for (const [slug, list] of wanted) {
      const resolvedAs = builtInEntry(slug)?.resolvedAs;
      if (!resolvedAs) throw new Error(`the contacts service is not asked whether '${slug}' records exist`);
      ids[resolvedAs.request].push(...list);
    }
    const reply = await this.resolveMany(ctx, ids);
    return new Map([...wanted.keys()].map((slug) => [slug, new Set(reply[builtInEntry(slug)!.resolvedAs!.reply].map((r) => r.id))]));
  }

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

import { DomainError, ErrorCode, FieldIssue, Logger } from '@crm/common';
import { Ops, RelatedSummary, RequestContext, ResolveContactsReply, ResolveContactsRequest } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';

export interface ContactLinks {
  contact_id?: string | null;
  company_id?: string | null;
  owner_id?: string | null;
}

export interface ResolvedLinks {
  contact: RelatedSummary | null;
  company: RelatedSummary | null;
  owner: RelatedSummary | null;
}

/** Contacts, companies and users (owners) belong to the contacts service; this asks it whether ids exist and what they are called. */
@Injectable()
export class ContactsDirectory {
  constructor(
    private readonly rpc: RpcCaller,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Rejects links to contacts, companies or users that do not exist, naming each bad field. */
  async assertExist(ctx: RequestContext, links: ContactLinks): Promise<void> {
    const contactId = links.contact_id ?? undefined;
    const companyId = links.company_id ?? undefined;
    const ownerId = links.owner_id ?? undefined;
    if (!contactId && !companyId && !ownerId) return;
    const reply = await this.resolve(ctx, links);
    const issues: FieldIssue[] = [];
    if (contactId && !reply.contacts.some((c) => c.id === contactId)) {
      issues.push({ field: 'contact_id', code: 'not_found', message: `No contact with id '${contactId}'.` });
    }
    if (companyId && !reply.companies.some((c) => c.id === companyId)) {
      issues.push({ field: 'company_id', code: 'not_found', message: `No company with id '${companyId}'.` });
    }
    if (ownerId && !reply.users.some((u) => u.id === ownerId)) {
      issues.push({ field: 'owner_id', code: 'not_found', message: `No user with id '${ownerId}'.` });
    }
    if (issues.length) {
      throw new DomainError(ErrorCode.ValidationFailed, issues.map((i) => i.message).join(' '), issues);
    }
  }

  /**
   * Names for a deal's contact, company and owner. A read should not fail because the contacts service is
   * briefly away, so then the summaries carry the id with an empty name. An owner deleted since keeps its
   * id with an empty name.
   */
  async describe(ctx: RequestContext, links: ContactLinks): Promise<ResolvedLinks> {
    const contactId = links.contact_id ?? undefined;
    const companyId = links.company_id ?? undefined;
    const ownerId = links.owner_id ?? undefined;
    const owner = (name: string): RelatedSummary | null => (ownerId ? { type: 'user', id: ownerId, name } : null);
    if (!contactId && !companyId && !ownerId) return { contact: null, company: null, owner: null };
    try {
      const reply = await this.resolve(ctx, links);
      return {
        contact: reply.contacts.find((c) => c.id === contactId) ?? null,
        company: reply.companies.find((c) => c.id === companyId) ?? null,
        owner: owner(reply.users.find((u) => u.id === ownerId)?.name ?? ''),
      };
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, request_id: ctx.request_id }, 'could not resolve contact and company names');
      return {
        contact: contactId ? { type: 'contact', id: contactId, name: '' } : null,
        company: companyId ? { type: 'company', id: companyId, name: '' } : null,
        owner: owner(''),
      };
    }
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

  private async resolve(ctx: RequestContext, links: ContactLinks): Promise<Required<ResolveContactsReply>> {
    const body: ResolveContactsRequest = {
      ...(links.contact_id ? { contact_ids: [links.contact_id] } : {}),
      ...(links.company_id ? { company_ids: [links.company_id] } : {}),
      ...(links.owner_id ? { user_ids: [links.owner_id] } : {}),
    };
    const reply = await this.rpc.call(Ops.contactsInternal.resolve, ctx, { body });
    return { contacts: reply?.contacts ?? [], companies: reply?.companies ?? [], users: reply?.users ?? [] };
  }
}

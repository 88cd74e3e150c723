import { DomainError, ErrorCode, FieldIssue, Logger } from '@crm/common';
import { ContactsInternalRpc, RelatedSummary, RequestContext, ResolveContactsReply, ResolveContactsRequest } from '@crm/contracts';
import { RpcClient } from '@crm/messaging';
import { LOGGER } from '@crm/runtime';
import { Inject, Injectable } from '@nestjs/common';

export interface ContactLinks {
  contact_id?: string | null;
  company_id?: string | null;
}

export interface ResolvedLinks {
  contact: RelatedSummary | null;
  company: RelatedSummary | null;
}

/** Contacts and companies belong to the contacts service; this asks it whether ids exist and what they are called. */
@Injectable()
export class ContactsDirectory {
  constructor(
    private readonly rpc: RpcClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Rejects links to contacts or companies that do not exist, naming each bad field. */
  async assertExist(ctx: RequestContext, links: ContactLinks): Promise<void> {
    const contactId = links.contact_id ?? undefined;
    const companyId = links.company_id ?? undefined;
    if (!contactId && !companyId) return;
    const reply = await this.resolve(ctx, contactId, companyId);
    const issues: FieldIssue[] = [];
    if (contactId && !reply.contacts.some((c) => c.id === contactId)) {
      issues.push({ field: 'contact_id', code: 'not_found', message: `No contact with id '${contactId}'.` });
    }
    if (companyId && !reply.companies.some((c) => c.id === companyId)) {
      issues.push({ field: 'company_id', code: 'not_found', message: `No company with id '${companyId}'.` });
    }
    if (issues.length) {
      throw new DomainError(ErrorCode.ValidationFailed, issues.map((i) => i.message).join(' '), issues);
    }
  }

  /**
   * Names for a deal's contact and company. A read should not fail because the contacts service is
   * briefly away, so then the summaries carry the id with an empty name.
   */
  async describe(ctx: RequestContext, links: ContactLinks): Promise<ResolvedLinks> {
    const contactId = links.contact_id ?? undefined;
    const companyId = links.company_id ?? undefined;
    if (!contactId && !companyId) return { contact: null, company: null };
    try {
      const reply = await this.resolve(ctx, contactId, companyId);
      return {
        contact: reply.contacts.find((c) => c.id === contactId) ?? null,
        company: reply.companies.find((c) => c.id === companyId) ?? null,
      };
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, request_id: ctx.request_id }, 'could not resolve contact and company names');
      return {
        contact: contactId ? { type: 'contact', id: contactId, name: '' } : null,
        company: companyId ? { type: 'company', id: companyId, name: '' } : null,
      };
    }
  }

  private async resolve(ctx: RequestContext, contactId?: string, companyId?: string): Promise<ResolveContactsReply> {
    const body: ResolveContactsRequest = {
      ...(contactId ? { contact_ids: [contactId] } : {}),
      ...(companyId ? { company_ids: [companyId] } : {}),
    };
    const reply = await this.rpc.request<ResolveContactsReply>(ContactsInternalRpc.Resolve, { ctx, params: {}, query: {}, body });
    return { contacts: reply?.contacts ?? [], companies: reply?.companies ?? [] };
  }
}

import type { ContactSummaryView, ContactView, RelatedSummary } from '@crm/contracts';
import { Company } from '../companies/company.entity';
import { iso } from '@crm/records';
import { User } from '../users/user.entity';
import { ownerSummary } from '../users/user.presenter';
import { Contact } from './contact.entity';

/** How a contact is named wherever another record refers to it. */
export function contactDisplayName(contact: Pick<Contact, 'firstName' | 'lastName' | 'email'>): string {
  return [contact.firstName, contact.lastName].filter((part) => part).join(' ') || contact.email;
}

export function presentContactSummary(contact: Contact): ContactSummaryView {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    stage: contact.stage,
    source: contact.source,
    created_at: contact.createdAt.toISOString(),
    updated_at: contact.updatedAt.toISOString(),
  };
}

function companySummary(company: Company | null): RelatedSummary | null {
  return company ? { type: 'company', id: company.id, name: company.name } : null;
}

export function presentContact(contact: Contact, company: Company | null, owner: User | null): ContactView {
  return {
    id: contact.id,
    email: contact.email,
    first_name: contact.firstName,
    last_name: contact.lastName,
    phone: contact.phone,
    title: contact.title,
    stage: contact.stage,
    source: contact.source,
    source_detail: contact.sourceDetail,
    company_id: contact.companyId,
    owner_id: contact.ownerId,
    icp_score: contact.icpScore,
    icp_score_reason: contact.icpScoreReason,
    icp_scored_at: iso(contact.icpScoredAt),
    metadata: contact.metadata ?? {},
    custom_fields: contact.customFields ?? {},
    relationships: { company: companySummary(company), owner: ownerSummary(contact.ownerId, owner) },
    created_at: contact.createdAt.toISOString(),
    updated_at: contact.updatedAt.toISOString(),
  };
}

/** `{data, included}`: the full contact and the summaries of the records it points to. */
export function presentContactWithIncluded(contact: Contact, company: Company | null, owner: User | null): { data: ContactView; included: RelatedSummary[] } {
  const data = presentContact(contact, company, owner);
  const included = [data.relationships.company, data.relationships.owner].filter((r): r is RelatedSummary => r !== null);
  return { data, included };
}

import { DomainError, FieldSpec, fieldSpecs } from '@crm/common';
import { CreateContactDto, UpdateContactDto } from '@crm/contracts';
import { BUILT_IN_RECORD_FIELDS } from '@crm/records';
import { Contact } from './contact.entity';

/** Every writable contact field and how it is stored. Email is handled apart (never null, unique). */
export const CONTACT_FIELDS: FieldSpec<Contact>[] = [
  ...fieldSpecs<Contact>({
    email: 'value',
    first_name: 'value',
    last_name: 'value',
    phone: 'value',
    title: 'value',
    stage: 'value',
    source: 'value',
    source_detail: 'value',
    company_id: 'value',
    owner_id: 'value',
    icp_score: 'value',
    icp_score_reason: 'value',
    icp_scored_at: 'date',
  }),
  ...BUILT_IN_RECORD_FIELDS,
];

/** The columns of a new contact other than id, metadata and custom fields; `now` dates a score sent without its date. */
export function newContactColumns(dto: CreateContactDto, now: Date): Partial<Contact> {
  const scored = dto.icp_score !== undefined && dto.icp_score !== null;
  return {
    email: dto.email,
    firstName: dto.first_name ?? null,
    lastName: dto.last_name ?? null,
    phone: dto.phone ?? null,
    title: dto.title ?? null,
    stage: dto.stage ?? null,
    source: dto.source ?? null,
    sourceDetail: dto.source_detail ?? null,
    companyId: dto.company_id ?? null,
    ownerId: dto.owner_id ?? null,
    icpScore: dto.icp_score ?? null,
    icpScoreReason: dto.icp_score_reason ?? null,
    // A score without a date was computed now.
    icpScoredAt: dto.icp_scored_at ? new Date(dto.icp_scored_at) : scored ? now : null,
  };
}

/** The 409 of a write whose email another contact (`holder`, when known) already has. */
export function contactEmailTaken(email: string, holder: string | undefined): DomainError {
  const owner = holder ? ` (${holder})` : '';
  return DomainError.conflict(`A contact with email '${email}' already exists${owner}.`, [
    { field: 'email', code: 'duplicate', message: `email '${email}' is already used by another contact${owner}` },
  ]);
}

/** The PATCH input for a contact: a new ICP score sent without its date was computed now. */
export function contactPatchInput(row: Contact, dto: UpdateContactDto, now: Date): Record<string, unknown> {
  const input = { ...dto } as Record<string, unknown>;
  if (dto.icp_score !== undefined && dto.icp_score !== null && dto.icp_scored_at === undefined && dto.icp_score !== row.icpScore) {
    input.icp_scored_at = now.toISOString();
  }
  return input;
}

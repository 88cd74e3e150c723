import { DomainError, FieldSpec, fieldSpecs } from '@crm/common';
import { BUILT_IN_RECORD_FIELDS } from '@crm/records';
import { Company } from './company.entity';

/** The 409 of a write whose domain another company (`holder`, when known) already has. */
export function companyDomainTaken(domain: string, holder: string | undefined): DomainError {
  const owner = holder ? ` (${holder})` : '';
  return DomainError.conflict(`A company with domain '${domain}' already exists${owner}.`, [
    { field: 'domain', code: 'duplicate', message: `domain '${domain}' is already used by another company${owner}` },
  ]);
}

export const COMPANY_FIELDS: FieldSpec<Company>[] = [...fieldSpecs<Company>({ name: 'value', domain: 'value', industry: 'value' }), ...BUILT_IN_RECORD_FIELDS];

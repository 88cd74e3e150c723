import type { CompanyView } from '@crm/contracts';
import { Company } from './company.entity';

export function presentCompany(company: Company): CompanyView {
  return {
    id: company.id,
    name: company.name,
    domain: company.domain,
    industry: company.industry,
    metadata: company.metadata ?? {},
    custom_fields: company.customFields ?? {},
    created_at: company.createdAt.toISOString(),
    updated_at: company.updatedAt.toISOString(),
  };
}

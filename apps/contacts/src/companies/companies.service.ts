import {
  CursorCodec,
  diffFields,
  DomainError,
  FieldSpec,
  fieldSpecs,
  findById,
  IdPrefix,
  insertReturning,
  isId,
  isUniqueViolation,
  keysetPage,
  newId,
  Page,
  returnedRows,
  transactionOf,
  updateReturning,
} from '@crm/common';
import { CompanyView, CreateCompanyDto, event, EventType, ListCompaniesQuery, RequestContext, UpdateCompanyDto } from '@crm/contracts';
import { createdChange, deletedChange, OutboxService, updatedChange } from '@crm/messaging';
import { BuiltInCustomFieldsService } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { BUILT_IN_RECORD_FIELDS } from '../shared/record-columns';
import { NOW_MS } from '../shared/sql';
import { likePattern } from '../shared/field-changes';
import { ContactCompanies } from '../contact-companies/contact-companies';
import { Company } from './company.entity';
import { presentCompany } from './company.presenter';

const LIST = 'companies';
const DOMAIN_INDEX = 'companies_domain_key';

/** The 409 of a write whose domain another company (`holder`, when known) already has. */
export function companyDomainTaken(domain: string, holder: string | undefined): DomainError {
  const owner = holder ? ` (${holder})` : '';
  return DomainError.conflict(`A company with domain '${domain}' already exists${owner}.`, [
    { field: 'domain', code: 'duplicate', message: `domain '${domain}' is already used by another company${owner}` },
  ]);
}

export const COMPANY_FIELDS: FieldSpec<Company>[] = [...fieldSpecs<Company>({ name: 'value', domain: 'value', industry: 'value' }), ...BUILT_IN_RECORD_FIELDS];

@Injectable()
export class CompaniesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly customFields: BuiltInCustomFieldsService,
    private readonly contactCompanies: ContactCompanies,
  ) {}

  /** `within` runs the write in a savepoint of that transaction (an import batch) instead of its own transaction. */
  async create(ctx: RequestContext, dto: CreateCompanyDto, within?: EntityManager): Promise<CompanyView> {
    const id = newId(IdPrefix.Company);
    try {
      return presentCompany(
        await transactionOf(
          this.dataSource,
          within,
        )(async (m) => {
          const customFields = await this.customFields.values(m, ctx, 'companies', id, dto.custom_fields);
          const company = await insertReturning(m, Company, {
            id,
            name: dto.name,
            domain: dto.domain ?? null,
            industry: dto.industry ?? null,
            metadata: dto.metadata ?? {},
            customFields,
          } as QueryDeepPartialEntity<Company>);
          await this.outbox.record(m, {
            events: [event(EventType.CompanyCreated, { company_id: id, name: company.name, domain: company.domain })],
            changes: [createdChange('companies', id, presentCompany(company))],
          });
          return company;
        }),
      );
    } catch (err) {
      throw await this.translateWriteError(err, dto.domain ?? undefined);
    }
  }

  async list(query: ListCompaniesQuery): Promise<Page<CompanyView>> {
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(Company), 'c', LIST, query);
    if (query.domain) qb.andWhere('lower(c.domain) = :domain', { domain: query.domain });
    if (query.search) qb.andWhere('c.name ILIKE :pattern', { pattern: likePattern(query.search) });
    return read(presentCompany);
  }

  async get(id: string): Promise<CompanyView> {
    return presentCompany(await this.find(this.dataSource.manager, id));
  }

  async update(ctx: RequestContext, id: string, dto: UpdateCompanyDto, within?: EntityManager): Promise<CompanyView> {
    if (!isId(id, IdPrefix.Company)) throw DomainError.notFound('company', id);
    try {
      return presentCompany(
        await transactionOf(
          this.dataSource,
          within,
        )(async (m) => {
          if (dto.custom_fields !== undefined) await this.customFields.lockDefinitions(m, 'companies');
          const company = await this.find(m, id, true);
          const input: Record<string, unknown> = { ...dto };
          input.custom_fields = await this.customFields.values(m, ctx, 'companies', id, dto.custom_fields, company.customFields ?? {});
          const { set, changes } = diffFields(company, input, COMPANY_FIELDS);
          if (!changes.changed.length) return company;
          const updated = await updateReturning(m, Company, id, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Company>);
          await this.outbox.record(m, {
            events: [event(EventType.CompanyUpdated, { company_id: id, ...changes })],
            changes: [updatedChange('companies', id, changes)],
          });
          return updated;
        }),
      );
    } catch (err) {
      throw await this.translateWriteError(err, dto.domain ?? undefined);
    }
  }

  /** Contacts of a deleted company keep existing without it, and lose their association with it; deals unlink it when they see company.deleted. */
  async remove(id: string): Promise<void> {
    if (!isId(id, IdPrefix.Company)) throw DomainError.notFound('company', id);
    await this.dataSource.transaction(async (m) => {
      // Locked first: contact writes that link this company wait (FOR KEY SHARE) and then fail cleanly.
      const company = await this.find(m, id, true);
      const unlinked: { id: string }[] = returnedRows(
        await m.query(`UPDATE contacts SET company_id = NULL, updated_at = ${NOW_MS} WHERE company_id = $1 RETURNING id`, [id]),
      );
      const unlinking = { changed: ['company_id'], previous: { company_id: id }, current: { company_id: null } };
      const associations = await this.contactCompanies.removeForTargets(m, [id]);
      await m.delete(Company, { id });
      await this.outbox.record(m, {
        events: [
          ...associations.events,
          ...unlinked.map((contact) => event(EventType.ContactUpdated, { contact_id: contact.id, ...unlinking })),
          event(EventType.CompanyDeleted, { company_id: id }),
        ],
        changes: [
          ...associations.changes,
          ...unlinked.map((contact) => updatedChange('contacts', contact.id, unlinking)),
          deletedChange('companies', id, presentCompany(company)),
        ],
      });
    });
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<Company> {
    if (!isId(id, IdPrefix.Company)) throw DomainError.notFound('company', id);
    const company = await findById(m, Company, id, lock);
    if (!company) throw DomainError.notFound('company', id);
    return company;
  }

  private async translateWriteError(err: unknown, domain: string | undefined): Promise<unknown> {
    if (isUniqueViolation(err, DOMAIN_INDEX) && domain) {
      const [existing] = await this.dataSource.query(`SELECT id FROM companies WHERE lower(domain) = lower($1)`, [domain]);
      return companyDomainTaken(domain, existing?.id);
    }
    return err;
  }
}

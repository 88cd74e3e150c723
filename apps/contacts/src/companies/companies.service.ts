import { CursorCodec, DomainError, findById, IdPrefix, isId, keysetPage, Page } from '@crm/common';
import { CompanyView, CreateCompanyDto, ListCompaniesQuery, RequestContext, UpdateCompanyDto } from '@crm/contracts';
import { BatchRunner, likePattern } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CompaniesBatchWriter } from './companies.batch';
import { Company } from './company.entity';
import { presentCompany } from './company.presenter';

export { COMPANY_FIELDS, companyDomainTaken } from './company-rows';

const LIST = 'companies';

@Injectable()
export class CompaniesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly batches: BatchRunner,
    private readonly writer: CompaniesBatchWriter,
  ) {}

  /** A batch of one through the companies' writer; `within` runs it in a savepoint of that transaction (an import's row). */
  async create(ctx: RequestContext, dto: CreateCompanyDto, within?: EntityManager): Promise<CompanyView> {
    return (await this.batches.one(ctx, this.writer, { create: [{ index: 0, body: dto }] }, within)) as CompanyView;
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
    return (await this.batches.one(ctx, this.writer, { update: [{ index: 0, id, body: dto }] }, within)) as CompanyView;
  }

  /** Contacts of a deleted company keep existing without it, and lose their association with it; deals unlink it when they see company.deleted. */
  async remove(ctx: RequestContext, id: string): Promise<void> {
    await this.batches.one(ctx, this.writer, { remove: [{ index: 0, id }] });
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<Company> {
    if (!isId(id, IdPrefix.Company)) throw DomainError.notFound('company', id);
    const company = await findById(m, Company, id, lock);
    if (!company) throw DomainError.notFound('company', id);
    return company;
  }
}

import { BatchWriteDto, CreateCompanyDto, ListCompaniesQuery, Ops, RequestContext, UpdateCompanyDto } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { CompaniesService } from './companies.service';
import { BatchRunner, Handles } from '@crm/runtime';
import { CompaniesBatchWriter } from './companies.batch';

@Controller()
export class CompaniesController {
  constructor(
    private readonly companies: CompaniesService,
    private readonly batches: BatchRunner,
    private readonly batchWriter: CompaniesBatchWriter,
  ) {}

  @Handles(Ops.companies.batch)
  batch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: BatchWriteDto) {
    return this.batches.run(ctx, body, this.batchWriter);
  }

  @Handles(Ops.companies.create)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreateCompanyDto) {
    return { data: await this.companies.create(ctx, body) };
  }

  @Handles(Ops.companies.list)
  list(@Payload('query') query: ListCompaniesQuery) {
    return this.companies.list(query);
  }

  @Handles(Ops.companies.get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.companies.get(id) };
  }

  @Handles(Ops.companies.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateCompanyDto) {
    return { data: await this.companies.update(ctx, id, body) };
  }

  @Handles(Ops.companies.remove)
  async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    await this.companies.remove(ctx, id);
  }
}

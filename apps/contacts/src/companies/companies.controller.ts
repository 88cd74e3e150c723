import { Ops, RequestContext, UpdateCompanyDto } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { recordsController } from '@crm/records';
import { Payload } from '@nestjs/microservices';
import { CompaniesBatchWriter } from './companies.batch';
import { CompaniesService } from './companies.service';

export class CompaniesController extends recordsController(CompaniesService, CompaniesBatchWriter, Ops.companies) {
  @Handles(Ops.companies.get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.records.get(id) };
  }

  @Handles(Ops.companies.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateCompanyDto) {
    return { data: await this.records.update(ctx, id, body) };
  }
}

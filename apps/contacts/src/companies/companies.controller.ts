import { InputPipe } from '@crm/common';
import { CompaniesRpc, CreateCompanyDto, ListCompaniesQuery, RequestContext, UpdateCompanyDto } from '@crm/contracts';
import { Controller, UseInterceptors } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { CompaniesService } from './companies.service';
import { SoftWarningsInterceptor } from '@crm/runtime';

@Controller()
export class CompaniesController {
  constructor(private readonly companies: CompaniesService) {}

  @MessagePattern(CompaniesRpc.Create)
  @UseInterceptors(SoftWarningsInterceptor)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('body', new InputPipe(CreateCompanyDto)) body: CreateCompanyDto,
  ) {
    return { data: await this.companies.create(ctx, body) };
  }

  @MessagePattern(CompaniesRpc.List)
  list(@Payload('query', new InputPipe(ListCompaniesQuery, 'query')) query: ListCompaniesQuery) {
    return this.companies.list(query);
  }

  @MessagePattern(CompaniesRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.companies.get(id) };
  }

  @MessagePattern(CompaniesRpc.Update)
  @UseInterceptors(SoftWarningsInterceptor)
  async update(
    @Payload('ctx') ctx: RequestContext,
    @Payload('params') { id }: { id: string },
    @Payload('body', new InputPipe(UpdateCompanyDto)) body: UpdateCompanyDto,
  ) {
    return { data: await this.companies.update(ctx, id, body) };
  }

  @MessagePattern(CompaniesRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.companies.remove(id);
  }
}

import { validateInput } from '@crm/common';
import { CompaniesRpc, CreateCompanyDto, ListCompaniesQuery, RpcRequest, UpdateCompanyDto } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { presentCompany } from './company.presenter';
import { CompaniesService } from './companies.service';

@Injectable()
export class CompaniesHandler {
  constructor(private readonly companies: CompaniesService) {}

  @RpcHandler(CompaniesRpc.Create)
  async create(req: RpcRequest) {
    return { data: presentCompany(await this.companies.create(req.ctx, validateInput(CreateCompanyDto, req.body))) };
  }

  @RpcHandler(CompaniesRpc.List)
  list(req: RpcRequest) {
    return this.companies.list(validateInput(ListCompaniesQuery, req.query, 'query'));
  }

  @RpcHandler(CompaniesRpc.Get)
  async get(req: RpcRequest) {
    return { data: presentCompany(await this.companies.get(req.params.id)) };
  }

  @RpcHandler(CompaniesRpc.Update)
  async update(req: RpcRequest) {
    return { data: presentCompany(await this.companies.update(req.ctx, req.params.id, validateInput(UpdateCompanyDto, req.body))) };
  }

  @RpcHandler(CompaniesRpc.Delete)
  async remove(req: RpcRequest) {
    await this.companies.remove(req.params.id);
  }
}

import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { CompaniesRpc, CompanyView, CreateCompanyDto, ListCompaniesQuery, UpdateCompanyDto } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('companies')
export class CompaniesController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, CompanyView, { summary: 'Create a company', body: CreateCompanyDto }, { warnings: true })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(CompanyView, { summary: 'List companies', query: ListCompaniesQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, CompanyView, { summary: 'Get a company' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, CompanyView, { summary: 'Update a company', body: UpdateCompanyDto }, { warnings: true })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(CompaniesRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Delete a company' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(CompaniesRpc.Delete, req);
  }
}

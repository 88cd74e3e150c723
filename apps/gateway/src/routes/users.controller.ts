import { ApiResource, ApiPage, ApiNoContent } from '../openapi/api-docs.decorators';
import { CreateUserDto, ListUsersQuery, UpdateUserDto, UserView, UsersRpc } from '@crm/contracts';
import { Controller, Delete, Get, HttpCode, Patch, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('users')
export class UsersController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(201)
  @ApiResource(201, UserView, { summary: 'Add a team member', body: CreateUserDto })
  create(@Req() req: GatewayRequest) {
    return this.forward.to(UsersRpc.Create, req);
  }

  @Get()
  @Scopes('read')
  @ApiPage(UserView, { summary: 'List team members', query: ListUsersQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(UsersRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, UserView, { summary: 'Get a team member' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(UsersRpc.Get, req);
  }

  @Patch(':id')
  @Scopes('write')
  @ApiResource(200, UserView, { summary: 'Update a team member', body: UpdateUserDto })
  update(@Req() req: GatewayRequest) {
    return this.forward.to(UsersRpc.Update, req);
  }

  @Delete(':id')
  @Scopes('write')
  @HttpCode(204)
  @ApiNoContent({ summary: 'Remove a team member' })
  async remove(@Req() req: GatewayRequest) {
    await this.forward.to(UsersRpc.Delete, req);
  }
}

import { ApiResource } from '../openapi/api-docs.decorators';
import { ContactsRpc, SchemaView } from '@crm/contracts';
import { Controller, Get, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

/** Custom object types live with the records they describe, in the contacts service. */
@Controller('schema')
export class SchemaController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Get()
  @Scopes('read')
  @ApiResource(200, SchemaView, { summary: 'Describe every object and its fields' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Schema, req);
  }
}

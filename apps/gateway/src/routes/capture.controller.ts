import { ApiResource } from '../openapi/api-docs.decorators';
import { CaptureContactDto, CaptureView, ContactsRpc } from '@crm/contracts';
import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import { GatewayRequest } from '../http/request-context';
import { ServiceForwarder } from './service-forwarder';
import { Scopes } from '../http/scopes';

@Controller('capture')
export class CaptureController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('capture')
  @HttpCode(202)
  @ApiResource(202, CaptureView, { summary: 'Capture a contact (create or enrich by email)', body: CaptureContactDto })
  capture(@Req() req: GatewayRequest) {
    return this.forward.to(ContactsRpc.Capture, req);
  }
}

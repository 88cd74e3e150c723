import { validateInput } from '@crm/common';
import { CaptureContactDto, ContactsRpc, RpcRequest } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { CaptureService } from './capture.service';

@Injectable()
export class CaptureHandler {
  constructor(private readonly captures: CaptureService) {}

  /** POST /capture, answered 202 by the gateway. */
  @RpcHandler(ContactsRpc.Capture)
  async capture(req: RpcRequest) {
    return { data: await this.captures.capture(validateInput(CaptureContactDto, req.body)) };
  }
}

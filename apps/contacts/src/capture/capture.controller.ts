import { InputPipe } from '@crm/common';
import { CaptureContactDto, ContactsRpc } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { CaptureService } from './capture.service';

@Controller()
export class CaptureController {
  constructor(private readonly captures: CaptureService) {}

  /** POST /capture, answered 202 by the gateway. */
  @MessagePattern(ContactsRpc.Capture)
  async capture(@Payload('body', new InputPipe(CaptureContactDto)) body: CaptureContactDto) {
    return { data: await this.captures.capture(body) };
  }
}

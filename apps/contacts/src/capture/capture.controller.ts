import { CaptureContactDto, Ops } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { CaptureService } from './capture.service';

@Controller()
export class CaptureController {
  constructor(private readonly captures: CaptureService) {}

  /** POST /capture, answered 202 by the gateway. */
  @Handles(Ops.capture.capture)
  async capture(@Payload('body') body: CaptureContactDto) {
    return { data: await this.captures.capture(body) };
  }
}

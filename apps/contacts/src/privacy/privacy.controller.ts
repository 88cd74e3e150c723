import { CreateErasureDto, Ops, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ErasuresService } from './erasures.service';
import { Suppressions } from './suppressions';

@Controller()
export class PrivacyController {
  constructor(
    private readonly erasures: ErasuresService,
    private readonly suppressions: Suppressions,
  ) {}

  /** POST /privacy/erasures, 202: the erasure runs after the answer. */
  @Handles(Ops.privacy.erase)
  async erase(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreateErasureDto) {
    return { data: await this.erasures.create(ctx, body) };
  }

  @Handles(Ops.privacy.get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.erasures.get(id) };
  }

  /** DELETE /privacy/suppressions/:email_hmac, 204; an unknown hash is a 404. */
  @Handles(Ops.privacy.liftSuppression)
  async lift(@Payload('params') { email_hmac }: { email_hmac: string }) {
    await this.suppressions.lift(email_hmac);
  }
}

import { InputPipe } from '@crm/common';
import { DealsInternalRpc, ImportDealsBatchRequest, RequestContext } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DealImportsService } from '../imports/deal-imports.service';
import { ContactLinksService } from './contact-links.service';
import { ListForContactBody, ReassignContactBody, ResolveDealsBody } from './internal.dto';

/** Requests from the contacts service; no HTTP route reaches these directly. */
@Controller()
export class DealsInternalController {
  constructor(
    private readonly links: ContactLinksService,
    private readonly imports: DealImportsService,
  ) {}

  @MessagePattern(DealsInternalRpc.ListForContact)
  listForContact(@Payload('body', new InputPipe(ListForContactBody)) body: ListForContactBody) {
    return this.links.listForContact(body);
  }

  @MessagePattern(DealsInternalRpc.ReassignContact)
  reassignContact(@Payload('body', new InputPipe(ReassignContactBody)) body: ReassignContactBody) {
    return this.links.reassignContact(body.from_contact_id, body.to_contact_id);
  }

  @MessagePattern(DealsInternalRpc.ImportBatch)
  importBatch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: ImportDealsBatchRequest) {
    return this.imports.applyBatch(ctx, body);
  }

  @MessagePattern(DealsInternalRpc.Resolve)
  resolve(@Payload('body', new InputPipe(ResolveDealsBody)) body: ResolveDealsBody) {
    return this.links.resolve(body.deal_ids);
  }
}

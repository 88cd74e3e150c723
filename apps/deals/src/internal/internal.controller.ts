import { ImportDealsBatchRequest, ListDealsForContactRequest, Ops, ReassignContactRequest, RequestContext, ResolveDealsRequest } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DealImportsService } from '../imports/deal-imports.service';
import { ContactLinksService } from './contact-links.service';

/** Requests from the contacts service; no HTTP route reaches these directly. */
@Controller()
export class DealsInternalController {
  constructor(
    private readonly links: ContactLinksService,
    private readonly imports: DealImportsService,
  ) {}

  @Handles(Ops.dealsInternal.listForContact)
  listForContact(@Payload('body') body: ListDealsForContactRequest) {
    return this.links.listForContact(body);
  }

  @Handles(Ops.dealsInternal.reassignContact)
  reassignContact(@Payload('body') body: ReassignContactRequest) {
    return this.links.reassignContact(body.from_contact_id, body.to_contact_id);
  }

  @Handles(Ops.dealsInternal.importBatch)
  importBatch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: ImportDealsBatchRequest) {
    return this.imports.applyBatch(ctx, body);
  }

  @Handles(Ops.dealsInternal.resolve)
  resolve(@Payload('body') body: ResolveDealsRequest) {
    return this.links.resolve(body.deal_ids);
  }
}

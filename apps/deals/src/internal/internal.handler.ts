import { validateInput } from '@crm/common';
import { DealsInternalRpc, RpcRequest } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { ContactLinksService } from './contact-links.service';
import { ListForContactBody, ReassignContactBody, ResolveDealsBody } from './internal.dto';

/** Requests from the contacts service; no HTTP route reaches these directly. */
@Injectable()
export class DealsInternalHandler {
  constructor(private readonly links: ContactLinksService) {}

  @RpcHandler(DealsInternalRpc.ListForContact)
  listForContact(req: RpcRequest) {
    return this.links.listForContact(validateInput(ListForContactBody, req.body));
  }

  @RpcHandler(DealsInternalRpc.ReassignContact)
  reassignContact(req: RpcRequest) {
    const body = validateInput(ReassignContactBody, req.body);
    return this.links.reassignContact(body.from_contact_id, body.to_contact_id);
  }

  @RpcHandler(DealsInternalRpc.Resolve)
  resolve(req: RpcRequest) {
    return this.links.resolve(validateInput(ResolveDealsBody, req.body).deal_ids);
  }
}

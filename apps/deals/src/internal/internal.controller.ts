import { InputPipe } from '@crm/common';
import { DealsInternalRpc } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ContactLinksService } from './contact-links.service';
import { ListForContactBody, ReassignContactBody, ResolveDealsBody } from './internal.dto';

/** Requests from the contacts service; no HTTP route reaches these directly. */
@Controller()
export class DealsInternalController {
  constructor(private readonly links: ContactLinksService) {}

  @MessagePattern(DealsInternalRpc.ListForContact)
  listForContact(@Payload('body', new InputPipe(ListForContactBody)) body: ListForContactBody) {
    return this.links.listForContact(body);
  }

  @MessagePattern(DealsInternalRpc.ReassignContact)
  reassignContact(@Payload('body', new InputPipe(ReassignContactBody)) body: ReassignContactBody) {
    return this.links.reassignContact(body.from_contact_id, body.to_contact_id);
  }

  @MessagePattern(DealsInternalRpc.Resolve)
  resolve(@Payload('body', new InputPipe(ResolveDealsBody)) body: ResolveDealsBody) {
    return this.links.resolve(body.deal_ids);
  }
}

import { DomainError, ErrorCode, Logger } from '@crm/common';
import {
  AddDealContactDto,
  DealContactItem,
  Ops,
  PageQuery,
  RelatedSummary,
  RequestContext,
  UpdateAssociationDto,
  UpdateAssociationTypeDto,
} from '@crm/contracts';
import { Handles, LOGGER } from '@crm/runtime';
import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ContactsDirectory } from '../deals/contacts-directory';
import { DealContacts } from './deal-contacts';

type Params = { id: string; contact_id: string };

/** /deals/:id/contacts and the labels of deal_contacts. Contacts are the contacts service's: it is asked whether one exists and what it is called. */
@Controller()
export class DealContactsController {
  constructor(
    private readonly associations: DealContacts,
    private readonly directory: ContactsDirectory,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Handles(Ops.deals.addContact)
  async add(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: Params, @Payload('body') body: AddDealContactDto) {
    const row = await this.associations.add(id, { target: body.contact_id, role: body.role, is_primary: body.is_primary }, async () => {
      const { contacts } = await this.directory.resolveMany(ctx, { contact_ids: [body.contact_id], company_ids: [], user_ids: [] });
      if (!contacts.length) {
        const message = `No contact with id '${body.contact_id}'.`;
        throw new DomainError(ErrorCode.NotFound, message, [{ field: 'contact_id', code: 'not_found', message }]);
      }
    });
    return { data: this.associations.present(row) };
  }

  @Handles(Ops.deals.contacts)
  list(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: Params, @Payload('query') query: PageQuery) {
    return this.associations.listForOwner<DealContactItem>(id, query, (ids) => this.names(ctx, ids));
  }

  @Handles(Ops.deals.updateContact)
  async update(@Payload('params') { id, contact_id }: Params, @Payload('body') body: UpdateAssociationDto) {
    return { data: this.associations.present(await this.associations.update(id, contact_id, body)) };
  }

  @Handles(Ops.deals.removeContact)
  async remove(@Payload('params') { id, contact_id }: Params) {
    await this.associations.remove(id, contact_id);
  }

  @Handles(Ops.dealsSchema.updateAssociation)
  async setLabels(@Payload('body') body: UpdateAssociationTypeDto) {
    return { data: await this.associations.setLabels(body.labels) };
  }

  /** A list should not fail because the contacts service is briefly away: names are then empty. */
  private async names(ctx: RequestContext, ids: string[]): Promise<Map<string, RelatedSummary>> {
    if (!ids.length) return new Map();
    try {
      const { contacts } = await this.directory.resolveMany(ctx, { contact_ids: ids, company_ids: [], user_ids: [] });
      return new Map(contacts.map((c) => [c.id, c]));
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, request_id: ctx.request_id }, 'could not resolve contact names');
      return new Map();
    }
  }
}

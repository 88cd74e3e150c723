import { FieldDefinitionDto, Ops, UpdateFieldDefinitionDto, UpdateObjectTypeDto } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { BuiltInCustomFieldsService } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DealContacts } from '../deal-contacts/deal-contacts';

/** `/objects/deals` and `/objects/pipelines`: the custom fields of this service's objects, as the contacts service answers for the others (Ops.objects). */
@Controller()
export class CustomFieldsController {
  constructor(
    private readonly fields: BuiltInCustomFieldsService,
    private readonly dealContacts: DealContacts,
  ) {}

  @Handles(Ops.dealsSchema.get)
  async get(@Payload('params') { slug }: { slug: string }) {
    return { data: await this.fields.describe(slug) };
  }

  @Handles(Ops.dealsSchema.update)
  async update(@Payload('params') { slug }: { slug: string }, @Payload('body') body: UpdateObjectTypeDto) {
    return { data: await this.fields.setLevel(slug, body) };
  }

  @Handles(Ops.dealsSchema.addField)
  async addField(@Payload('params') { slug }: { slug: string }, @Payload('body') body: FieldDefinitionDto) {
    return { data: await this.fields.addField(slug, body) };
  }

  @Handles(Ops.dealsSchema.updateField)
  async updateField(@Payload('params') { slug, name }: { slug: string; name: string }, @Payload('body') body: UpdateFieldDefinitionDto) {
    return { data: await this.fields.updateField(slug, name, body) };
  }

  @Handles(Ops.dealsSchema.removeField)
  async removeField(@Payload('params') { slug, name }: { slug: string; name: string }) {
    return { data: await this.fields.removeField(slug, name) };
  }

  /** For GET /schema, which the contacts service assembles: custom fields and the association types kept here. */
  @Handles(Ops.dealsSchema.describe)
  async describe() {
    const [objects, dealContacts] = await Promise.all([this.fields.states(), this.dealContacts.describe()]);
    return { objects, associations: [dealContacts] };
  }
}

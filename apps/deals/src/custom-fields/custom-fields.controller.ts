import { InputPipe } from '@crm/common';
import { DealsSchemaRpc, FieldDefinitionDto, UpdateFieldDefinitionDto, UpdateObjectTypeDto } from '@crm/contracts';
import { BuiltInCustomFieldsService } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';

/** `/objects/deals` and `/objects/pipelines`: the custom fields of this service's objects, as ObjectTypesRpc answers for the others. */
@Controller()
export class CustomFieldsController {
  constructor(private readonly fields: BuiltInCustomFieldsService) {}

  @MessagePattern(DealsSchemaRpc.Get)
  async get(@Payload('params') { slug }: { slug: string }) {
    return { data: await this.fields.describe(slug) };
  }

  @MessagePattern(DealsSchemaRpc.Update)
  async update(@Payload('params') { slug }: { slug: string }, @Payload('body', new InputPipe(UpdateObjectTypeDto)) body: UpdateObjectTypeDto) {
    return { data: await this.fields.setLevel(slug, body) };
  }

  @MessagePattern(DealsSchemaRpc.AddField)
  async addField(@Payload('params') { slug }: { slug: string }, @Payload('body', new InputPipe(FieldDefinitionDto)) body: FieldDefinitionDto) {
    return { data: await this.fields.addField(slug, body) };
  }

  @MessagePattern(DealsSchemaRpc.UpdateField)
  async updateField(
    @Payload('params') { slug, name }: { slug: string; name: string },
    @Payload('body', new InputPipe(UpdateFieldDefinitionDto)) body: UpdateFieldDefinitionDto,
  ) {
    return { data: await this.fields.updateField(slug, name, body) };
  }

  @MessagePattern(DealsSchemaRpc.RemoveField)
  async removeField(@Payload('params') { slug, name }: { slug: string; name: string }) {
    return { data: await this.fields.removeField(slug, name) };
  }

  /** For GET /schema, which the contacts service assembles. */
  @MessagePattern(DealsSchemaRpc.Describe)
  async describe() {
    return { objects: await this.fields.states() };
  }
}

import { validationFailed } from '@crm/common';
import { Ops, RequestContext, SchemaView } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ObjectTypesService } from '../objects/object-types.service';

/** GET /schema: every built-in object, then every active custom object, with their field definitions. */
@Controller()
export class SchemaController {
  constructor(private readonly types: ObjectTypesService) {}

  @Handles(Ops.schema.get)
  async get(@Payload('ctx') ctx: RequestContext, @Payload('query') query: unknown): Promise<{ data: SchemaView }> {
    // No parameters: an unknown one is a 400, as everywhere else.
    const unknown = Object.keys(query ?? {});
    if (unknown.length) throw validationFailed(unknown.map((field) => ({ field, code: 'unknown_field', message: `unknown field '${field}'` })));
    return { data: await this.types.describeSchema(ctx) };
  }
}

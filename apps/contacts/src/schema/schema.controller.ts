import { InputPipe, validationFailed } from '@crm/common';
import { BUILT_IN_OBJECTS, ContactsRpc, SchemaView } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { presentBuiltInObject, presentObjectType } from '../objects/object-type.presenter';
import { ObjectTypesService } from '../objects/object-types.service';

/** GET /schema: every built-in object, then every active custom object, with their field definitions. */
@Controller()
export class SchemaController {
  constructor(private readonly dataSource: DataSource, private readonly types: ObjectTypesService) {}

  @MessagePattern(ContactsRpc.Schema)
  async get(@Payload('query') query: unknown): Promise<{ data: SchemaView }> {
    // No parameters: an unknown one is a 400, as everywhere else.
    const unknown = Object.keys(query ?? {});
    if (unknown.length) throw validationFailed(unknown.map((field) => ({ field, code: 'unknown_field', message: `unknown field '${field}'` })));
    // One snapshot, so a field added meanwhile appears either everywhere or nowhere.
    return this.dataSource.transaction('REPEATABLE READ', async (m) => {
      const builtIn = [];
      for (const object of BUILT_IN_OBJECTS) builtIn.push(presentBuiltInObject(object, await this.types.builtInFields(m, object.slug)));
      const custom = (await this.types.allCustom(m, 'active')).map(presentObjectType);
      return { data: { objects: [...builtIn, ...custom] } };
    });
  }
}

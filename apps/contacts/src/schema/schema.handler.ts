import { validationFailed } from '@crm/common';
import { BUILT_IN_OBJECTS, ContactsRpc, RpcRequest, SchemaView } from '@crm/contracts';
import { RpcHandler } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { presentBuiltInObject, presentObjectType } from '../objects/object-type.presenter';
import { ObjectTypesService } from '../objects/object-types.service';

/** GET /schema: every built-in object, then every active custom object, with their field definitions. */
@Injectable()
export class SchemaHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly types: ObjectTypesService,
  ) {}

  @RpcHandler(ContactsRpc.Schema)
  async get(req: RpcRequest): Promise<{ data: SchemaView }> {
    // No parameters: an unknown one is a 400, as everywhere else.
    const unknown = Object.keys(req.query ?? {});
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

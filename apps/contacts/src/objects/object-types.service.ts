import { ContactCompanies } from '../contact-companies/contact-companies';
import { CursorCodec, diffFields, DomainError, ErrorCode, fieldSpecs, IdPrefix, isUniqueViolation, keysetPage, newId, Page } from '@crm/common';
import {
  BUILT_IN_OBJECTS,
  BuiltInCustomFieldsState,
  CreateObjectTypeDto,
  EventType,
  FieldDefinitionDto,
  ListObjectTypesQuery,
  NO_CUSTOM_FIELDS,
  ObjectSchemaView,
  Ops,
  RESERVED_SLUGS,
  RequestContext,
  SchemaLimits,
  SchemaView,
  UpdateFieldDefinitionDto,
  UpdateObjectTypeDto,
  builtInObject,
  normaliseDefinition,
  presentBuiltInObject,
} from '@crm/contracts';
import { OutboxService, RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import {
  appendDefinition,
  BuiltInCustomFieldsService,
  checkDefinitions,
  CustomInstantIndexes,
  definitionNamed,
  editedDefinitions,
  moveStoredValues,
  NOW_MS,
} from '@crm/records';
import { ContactsFieldReferences } from './contacts-field-references';
import { ObjectType } from './object-type.entity';
import { presentObjectType } from './object-type.presenter';

const LIST = 'object_types';
const SLUG_INDEX = 'object_types_slug_key';
/** What a PATCH of a custom object may change; fields are added through their own route. */
const OBJECT_TYPE_FIELDS = fieldSpecs<ObjectType>({ name: 'value', enforcement_level: 'value', status: 'value' });

/** Custom object types, and (through BuiltInCustomFieldsService) the custom fields of this service's built-in objects. */
@Injectable()
export class ObjectTypesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly builtInFields: BuiltInCustomFieldsService,
    private readonly references: ContactsFieldReferences,
    private readonly rpc: RpcCaller,
    private readonly contactCompanies: ContactCompanies,
    private readonly instantIndexes: CustomInstantIndexes,
  ) {
    // One table holds every custom object's records, so each field's index is partial, over its object's
    // rows: the catalog scopes every query with the same literal (object_type_id = '<id>'), which the planner
    // matches to the index's predicate.
    instantIndexes.register({
      tables: ['object_records'],
      targets: async (m) =>
        (await this.allCustom(m)).flatMap((type) =>
          type.fields
            .filter((f) => f.type === 'datetime')
            .map((f) => ({ table: 'object_records', column: '"values"', field: f.name, scope: { column: 'object_type_id', value: type.id } })),
        ),
    });
  }

  /**
   * GET /schema: every built-in object, then every active custom object. This service's part comes from
   * one snapshot, so a field added meanwhile appears everywhere or nowhere; the custom fields of deals and
   * pipelines come from the deals service (503 while it is away).
   */
  async describeSchema(ctx: RequestContext): Promise<SchemaView> {
    const [remote, local] = await Promise.all([
      this.rpc.call(Ops.dealsSchema.describe, ctx, { body: {} }),
      this.dataSource.transaction('REPEATABLE READ', async (m) => {
        const states: Record<string, BuiltInCustomFieldsState> = {};
        for (const object of BUILT_IN_OBJECTS) if (this.builtInFields.owns(object.slug)) states[object.slug] = await this.builtInFields.state(m, object.slug);
        return { states, custom: (await this.allCustom(m, 'active')).map(presentObjectType) };
      }),
    ]);
    const states = { ...remote.objects, ...local.states };
    const associations = [await this.contactCompanies.describe(), ...(remote.associations ?? [])].sort((a, b) => a.type.localeCompare(b.type));
    return {
      objects: [...BUILT_IN_OBJECTS.map((object) => presentBuiltInObject(object, states[object.slug] ?? NO_CUSTOM_FIELDS)), ...local.custom],
      associations,
    };
  }

  async create(dto: CreateObjectTypeDto): Promise<ObjectSchemaView> {
    return presentObjectType(await this.afterCommit(this.insert(dto)));
  }

  /** The date-time indexes follow the committed definitions, built after the answer rather than inside its transaction. */
  private async afterCommit<T>(committed: Promise<T>): Promise<T> {
    const result = await committed;
    this.instantIndexes.refresh();
    return result;
  }

  private async insert(dto: CreateObjectTypeDto): Promise<ObjectType> {
    if (RESERVED_SLUGS.has(dto.slug)) {
      throw DomainError.invalid('slug', `slug '${dto.slug}' is reserved for a built-in object or endpoint`, 'reserved');
    }
    const fields = (dto.fields ?? []).map((f) => normaliseDefinition(f));
    const id = newId(IdPrefix.ObjectType);
    try {
      return await this.dataSource.transaction(async (m) => {
        // One creator at a time, so the count limit holds under concurrency.
        await m.query(`SELECT pg_advisory_xact_lock(hashtext('crm.object_types.create'))`);
        const [{ count }] = await m.query(`SELECT count(*)::int AS count FROM object_types`);
        if (count >= SchemaLimits.customObjectTypes) {
          throw new DomainError(ErrorCode.Conflict, `At most ${SchemaLimits.customObjectTypes} custom object types may exist (archived ones count).`);
        }
        await checkDefinitions(fields, 'fields', (target) => this.references.canReference(m, target, dto.slug));
        await m.insert(ObjectType, {
          id,
          slug: dto.slug,
          name: dto.name,
          enforcementLevel: dto.enforcement_level ?? 'hard',
          status: 'active',
          fields,
        } as QueryDeepPartialEntity<ObjectType>);
        await this.outbox.append(m, EventType.ObjectTypeCreated, { object_type_id: id, slug: dto.slug });
        return m.findOneByOrFail(ObjectType, { id });
      });
    } catch (err) {
      if (isUniqueViolation(err, SLUG_INDEX)) {
        throw DomainError.conflict(`An object type with slug '${dto.slug}' already exists.`, [
          { field: 'slug', code: 'duplicate', message: `slug '${dto.slug}' is already used by another object type` },
        ]);
      }
      throw err;
    }
  }

  async list(query: ListObjectTypesQuery): Promise<Page<ObjectSchemaView>> {
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(ObjectType), 't', LIST, query);
    if (query.status) qb.andWhere('t.status = :status', { status: query.status });
    return read(presentObjectType);
  }

  /** An object by slug (or a custom object by id), built-in or custom, as GET /schema shows it. */
  async view(slugOrId: string): Promise<ObjectSchemaView> {
    const builtIn = builtInObject(slugOrId);
    if (builtIn) return this.builtInFields.owns(slugOrId) ? this.builtInFields.describe(slugOrId) : presentBuiltInObject(builtIn, NO_CUSTOM_FIELDS);
    return presentObjectType(await this.find(this.dataSource.manager, slugOrId));
  }

  async update(slugOrId: string, dto: UpdateObjectTypeDto): Promise<ObjectSchemaView> {
    if (builtInObject(slugOrId)) return this.builtInFields.setLevel(slugOrId, dto);
    return this.dataSource.transaction(async (m) => {
      const type = await this.find(m, slugOrId, true);
      const { set, changes } = diffFields(type, dto, OBJECT_TYPE_FIELDS);
      const changed = changes.changed;
      if (!changed.length) return presentObjectType(type);
      await m.update(ObjectType, { id: type.id }, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<ObjectType>);
      await this.outbox.append(m, EventType.ObjectTypeUpdated, { object_type_id: type.id, slug: type.slug, changed });
      return presentObjectType(await m.findOneByOrFail(ObjectType, { id: type.id }));
    });
  }

  /** Adds one field to a custom object, or a custom field to a built-in object of this service. */
  async addField(slugOrId: string, dto: FieldDefinitionDto): Promise<ObjectSchemaView> {
    if (builtInObject(slugOrId)) return this.builtInFields.addField(slugOrId, dto);
    const def = normaliseDefinition(dto);
    return this.afterCommit(
      this.dataSource.transaction(async (m) => {
        const type = await this.find(m, slugOrId, true);
        const fields = appendDefinition(type.fields, def);
        await checkDefinitions([def], 'field', (target) => this.references.canReference(m, target, type.slug));
        return this.saveFields(m, type, fields);
      }),
    );
  }

  /**
   * Renames a field or changes its label. A new name moves every stored value to it in the same
   * transaction, so no record is ever read with the value under the old name; records are not otherwise
   * changed (no updated_at, no record events). The type and rules of a field cannot change. Record writes
   * lock the object (shared) before their record, so they wait for this and then see the new fields.
   */
  async updateField(slugOrId: string, name: string, dto: UpdateFieldDefinitionDto): Promise<ObjectSchemaView> {
    if (builtInObject(slugOrId)) return this.builtInFields.updateField(slugOrId, name, dto);
    return this.afterCommit(
      this.dataSource.transaction(async (m) => {
        const type = await this.find(m, slugOrId, true);
        const edited = editedDefinitions(type.fields, name, dto, type.slug);
        if (!edited) return presentObjectType(type);
        if (edited.renamedTo) await moveStoredValues(m, this.recordValues(type), name, edited.renamedTo);
        return this.saveFields(m, type, edited.fields);
      }),
    );
  }

  /** Removes a field and, in the same transaction, every value stored under it; this cannot be undone. */
  async removeField(slugOrId: string, name: string): Promise<ObjectSchemaView> {
    if (builtInObject(slugOrId)) return this.builtInFields.removeField(slugOrId, name);
    return this.afterCommit(
      this.dataSource.transaction(async (m) => {
        const type = await this.find(m, slugOrId, true);
        definitionNamed(type.fields, name, type.slug);
        await moveStoredValues(m, this.recordValues(type), name, null);
        return this.saveFields(
          m,
          type,
          type.fields.filter((f) => f.name !== name),
        );
      }),
    );
  }

  private recordValues(type: ObjectType) {
    return { table: 'object_records', column: '"values"', scope: { column: 'object_type_id', value: type.id } };
  }

  private async saveFields(m: EntityManager, type: ObjectType, fields: ObjectType['fields']): Promise<ObjectSchemaView> {
    await m.update(ObjectType, { id: type.id }, { fields, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<ObjectType>);
    await this.outbox.append(m, EventType.ObjectTypeUpdated, { object_type_id: type.id, slug: type.slug, changed: ['fields'] });
    return presentObjectType(await m.findOneByOrFail(ObjectType, { id: type.id }));
  }

  async allCustom(m: EntityManager, status?: 'active'): Promise<ObjectType[]> {
    return m.find(ObjectType, { where: status ? { status } : {}, order: { id: 'ASC' } });
  }

  /** A custom object type by slug or `ot_` id; 404 otherwise. `lock` holds it for the transaction. */
  async find(m: EntityManager, slugOrId: string, lock: false | 'share' | true = false): Promise<ObjectType> {
    const where = slugOrId.startsWith(`${IdPrefix.ObjectType}_`) ? { id: slugOrId } : { slug: slugOrId };
    const mode = lock === 'share' ? ('pessimistic_read' as const) : ('pessimistic_write' as const);
    const type = await m.findOne(ObjectType, { where, ...(lock ? { lock: { mode } } : {}) });
    if (!type) throw new DomainError(ErrorCode.NotFound, `No object type '${slugOrId}'.`);
    return type;
  }
}

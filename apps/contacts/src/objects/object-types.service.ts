import { decodeCursor, diffFields, DomainError, ErrorCode, FieldIssue, FieldSpec, IdPrefix, isUniqueViolation, newId, Page, pageSize, toPage, validationFailed } from '@crm/common';
import {
  CreateObjectTypeDto,
  CustomFieldDefinition,
  definitionProblems,
  EventType,
  FieldDefinitionDto,
  ListObjectTypesQuery,
  normaliseDefinition,
  ObjectSchemaView,
  ObjectTypeEventData,
  REFERENCEABLE_BUILT_INS,
  RESERVED_SLUGS,
  SchemaLimits,
  SchemaView,
  BUILT_IN_OBJECTS,
  BuiltInObject,
  UpdateFieldDefinitionDto,
  UpdateObjectTypeDto,
} from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { NOW_MS } from '../shared/sql';
import { BuiltInCustomFields, ObjectType } from './object-type.entity';
import {
  acceptsCustomFields,
  builtInFieldNames,
  builtInObject,
  BuiltInCustomFieldsState,
  CUSTOM_FIELD_BUILT_INS,
  CustomFieldBuiltIn,
  presentBuiltInObject,
  presentObjectType,
} from './object-type.presenter';

const LIST = 'object_types';
const SLUG_INDEX = 'object_types_slug_key';
/** What a PATCH of a custom object may change; fields are added through their own route. */
const OBJECT_TYPE_FIELDS: FieldSpec<ObjectType>[] = [
  { api: 'name', prop: 'name', kind: 'value' },
  { api: 'enforcement_level', prop: 'enforcementLevel', kind: 'value' },
  { api: 'status', prop: 'status', kind: 'value' },
];

/** Custom object types, and the custom fields of built-in objects. */
@Injectable()
export class ObjectTypesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
  ) {}

  /** GET /schema: every built-in object, then every active custom object, from one snapshot so a field added meanwhile appears everywhere or nowhere. */
  async describeSchema(): Promise<SchemaView> {
    return this.dataSource.transaction('REPEATABLE READ', async (m) => {
      const builtIn = [];
      for (const object of BUILT_IN_OBJECTS) builtIn.push(presentBuiltInObject(object, await this.builtInState(m, object.slug)));
      const custom = (await this.allCustom(m, 'active')).map(presentObjectType);
      return { objects: [...builtIn, ...custom] };
    });
  }

  async create(dto: CreateObjectTypeDto): Promise<ObjectSchemaView> {
    return presentObjectType(await this.insert(dto));
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
        await this.checkDefinitions(m, fields, 'fields', dto.slug);
        await m.insert(ObjectType, {
          id,
          slug: dto.slug,
          name: dto.name,
          enforcementLevel: dto.enforcement_level ?? 'hard',
          status: 'active',
          fields,
        } as QueryDeepPartialEntity<ObjectType>);
        await this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeCreated, { object_type_id: id, slug: dto.slug });
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
    const after = decodeCursor<string>(LIST, query.cursor, 'string');
    const size = pageSize(query);
    const qb = this.dataSource.getRepository(ObjectType).createQueryBuilder('t').orderBy('t.id', 'ASC').limit(size + 1);
    if (after) qb.andWhere('t.id > :after', { after });
    if (query.status) qb.andWhere('t.status = :status', { status: query.status });
    return toPage(LIST, await qb.getMany(), size, (t) => t.id, presentObjectType);
  }

  /** An object by slug (or a custom object by id), built-in or custom, as GET /schema shows it. */
  async view(slugOrId: string): Promise<ObjectSchemaView> {
    const builtIn = builtInObject(slugOrId);
    if (builtIn) return presentBuiltInObject(builtIn, await this.builtInState(this.dataSource.manager, slugOrId));
    return presentObjectType(await this.find(this.dataSource.manager, slugOrId));
  }

  async update(slugOrId: string, dto: UpdateObjectTypeDto): Promise<ObjectSchemaView> {
    const builtIn = builtInObject(slugOrId);
    if (builtIn) return this.updateBuiltIn(builtIn, dto);
    return this.dataSource.transaction(async (m) => {
      const type = await this.find(m, slugOrId, true);
      const { set, changes } = diffFields(type, dto, OBJECT_TYPE_FIELDS);
      const changed = changes.changed;
      if (!changed.length) return presentObjectType(type);
      await m.update(ObjectType, { id: type.id }, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<ObjectType>);
      await this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeUpdated, { object_type_id: type.id, slug: type.slug, changed });
      return presentObjectType(await m.findOneByOrFail(ObjectType, { id: type.id }));
    });
  }

  /** A built-in object's name and status are fixed; the enforcement level of its custom fields may change. */
  private async updateBuiltIn(object: BuiltInObject, dto: UpdateObjectTypeDto): Promise<ObjectSchemaView> {
    const fixed = (['name', 'status'] as const).filter((key) => dto[key] !== undefined);
    if (fixed.length) {
      throw DomainError.invalid(fixed[0], `'${object.slug}' is a built-in object: its ${fixed.join(' and ')} cannot change, only its enforcement_level.`);
    }
    const slug = this.customFieldBuiltIn(object);
    return this.dataSource.transaction(async (m) => {
      const row = await this.lockBuiltIn(m, slug);
      if (dto.enforcement_level === undefined || dto.enforcement_level === row.enforcementLevel) return presentBuiltInObject(object, row);
      await m.update(BuiltInCustomFields, { objectSlug: slug }, { enforcementLevel: dto.enforcement_level, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<BuiltInCustomFields>);
      await this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeUpdated, { object_type_id: null, slug, changed: ['enforcement_level'] });
      return presentBuiltInObject(object, { ...row, enforcementLevel: dto.enforcement_level });
    });
  }

  /** The built-in object as one that takes custom fields here, or a 400 saying it does not. */
  private customFieldBuiltIn(object: BuiltInObject): CustomFieldBuiltIn {
    if (!acceptsCustomFields(object.slug)) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `Custom fields can be defined on ${CUSTOM_FIELD_BUILT_INS.join(', ')} and custom objects; '${object.slug}' does not accept them in this version.`,
      );
    }
    return object.slug;
  }

  /** The custom-field row of a built-in object, created on first use and locked for the transaction. */
  private async lockBuiltIn(m: EntityManager, slug: CustomFieldBuiltIn): Promise<BuiltInCustomFields> {
    await m.query(`INSERT INTO built_in_custom_fields (object_slug) VALUES ($1) ON CONFLICT DO NOTHING`, [slug]);
    return m.findOneOrFail(BuiltInCustomFields, { where: { objectSlug: slug }, lock: { mode: 'pessimistic_write' } });
  }

  /** Adds one field to a custom object, or a custom field to a built-in object that takes them. */
  async addField(slugOrId: string, dto: FieldDefinitionDto): Promise<ObjectSchemaView> {
    const def = normaliseDefinition(dto);
    const builtIn = builtInObject(slugOrId);
    const builtInSlug = builtIn && this.customFieldBuiltIn(builtIn);
    return this.dataSource.transaction(async (m) => {
      if (builtIn && builtInSlug) {
        const slug = builtInSlug;
        const row = await this.lockBuiltIn(m, slug);
        if (builtInFieldNames(slug).has(def.name) || def.name === 'custom_fields') throw duplicateField(def.name, `a built-in field of ${slug}`);
        const fields = this.appendField(row.fields, def);
        await this.checkDefinitions(m, [def], 'field', slug);
        await m.update(BuiltInCustomFields, { objectSlug: slug }, { fields, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<BuiltInCustomFields>);
        await this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeUpdated, { object_type_id: null, slug, changed: ['fields'] });
        return presentBuiltInObject(builtIn, { fields, enforcementLevel: row.enforcementLevel });
      }
      const type = await this.find(m, slugOrId, true);
      const fields = this.appendField(type.fields, def);
      await this.checkDefinitions(m, [def], 'field', type.slug);
      await m.update(ObjectType, { id: type.id }, { fields, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<ObjectType>);
      await this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeUpdated, { object_type_id: type.id, slug: type.slug, changed: ['fields'] });
      return presentObjectType(await m.findOneByOrFail(ObjectType, { id: type.id }));
    });
  }

  /**
   * Renames a field or changes its label. A new name moves every stored value to it in the same
   * transaction, so no record is ever read with the value under the old name; records are not otherwise
   * changed (no updated_at, no record events). The type and rules of a field cannot change.
   */
  async updateField(slugOrId: string, name: string, dto: UpdateFieldDefinitionDto): Promise<ObjectSchemaView> {
    return this.dataSource.transaction(async (m) => {
      const owner = await this.fieldOwner(m, slugOrId);
      const current = owner.field(name);
      const renamed = dto.name !== undefined && dto.name !== name ? dto.name : undefined;
      if (renamed && (owner.fields.some((f) => f.name === renamed) || owner.reserved.has(renamed))) throw duplicateField(renamed, 'a field of this object');
      const label = dto.label ?? current.label;
      if (!renamed && label === current.label) return owner.present(owner.fields);
      const fields = owner.fields.map((f) => (f.name === name ? { ...f, name: renamed ?? name, label } : f));
      if (renamed) await owner.moveValues(name, renamed);
      return owner.save(fields);
    });
  }

  /** Removes a field and, in the same transaction, every value stored under it; this cannot be undone. */
  async removeField(slugOrId: string, name: string): Promise<ObjectSchemaView> {
    return this.dataSource.transaction(async (m) => {
      const owner = await this.fieldOwner(m, slugOrId);
      owner.field(name);
      await owner.moveValues(name, null);
      return owner.save(owner.fields.filter((f) => f.name !== name));
    });
  }

  /**
   * The object whose fields change, locked for the transaction before any record: record writes lock it
   * (shared) before their record too, so they wait for the change and then see the new fields.
   */
  private async fieldOwner(m: EntityManager, slugOrId: string): Promise<FieldOwner> {
    const builtIn = builtInObject(slugOrId);
    const field = (fields: CustomFieldDefinition[], slug: string) => (name: string) => {
      const found = fields.find((f) => f.name === name);
      if (!found) throw new DomainError(ErrorCode.NotFound, `No custom field '${name}' on '${slug}'.`);
      return found;
    };
    if (builtIn) {
      const slug = this.customFieldBuiltIn(builtIn);
      const row = await this.lockBuiltIn(m, slug);
      const event = () => this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeUpdated, { object_type_id: null, slug, changed: ['fields'] });
      return {
        fields: row.fields,
        reserved: new Set([...builtInFieldNames(slug), 'custom_fields']),
        field: field(row.fields, slug),
        present: (fields) => presentBuiltInObject(builtIn, { fields, enforcementLevel: row.enforcementLevel }),
        // `slug` is one of CUSTOM_FIELD_BUILT_INS, each the name of its table.
        moveValues: (from, to) => moveValues(m, slug, 'custom_fields', from, to),
        save: async (fields) => {
          await m.update(BuiltInCustomFields, { objectSlug: slug }, { fields, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<BuiltInCustomFields>);
          await event();
          return presentBuiltInObject(builtIn, { fields, enforcementLevel: row.enforcementLevel });
        },
      };
    }
    const type = await this.find(m, slugOrId, true);
    return {
      fields: type.fields,
      reserved: new Set(),
      field: field(type.fields, type.slug),
      present: (fields) => presentObjectType({ ...type, fields }),
      moveValues: (from, to) => moveValues(m, 'object_records', '"values"', from, to, type.id),
      save: async (fields) => {
        await m.update(ObjectType, { id: type.id }, { fields, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<ObjectType>);
        await this.outbox.append<ObjectTypeEventData>(m, EventType.ObjectTypeUpdated, { object_type_id: type.id, slug: type.slug, changed: ['fields'] });
        return presentObjectType(await m.findOneByOrFail(ObjectType, { id: type.id }));
      },
    };
  }

  /** The custom fields of a built-in object and their enforcement level (none, hard, until first set). */
  async builtInState(m: EntityManager, slug: string): Promise<BuiltInCustomFieldsState> {
    const row = await m.findOneBy(BuiltInCustomFields, { objectSlug: slug });
    return { fields: row?.fields ?? [], enforcementLevel: row?.enforcementLevel ?? 'hard' };
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

  private appendField(existing: CustomFieldDefinition[], def: CustomFieldDefinition): CustomFieldDefinition[] {
    if (existing.some((f) => f.name === def.name)) throw duplicateField(def.name, 'an existing field');
    if (existing.length >= SchemaLimits.fieldsPerObject) {
      throw new DomainError(ErrorCode.Conflict, `An object may have at most ${SchemaLimits.fieldsPerObject} custom fields.`);
    }
    return [...existing, def];
  }

  /**
   * Definitions must be consistent (enum values for enums, a target for references...), named once, and
   * reference an object that exists: a built-in one with records, a custom one, or the object itself.
   */
  private async checkDefinitions(m: EntityManager, defs: CustomFieldDefinition[], path: string, ownSlug: string): Promise<void> {
    const issues: FieldIssue[] = [];
    const seen = new Set<string>();
    const single = path === 'field';
    for (const [i, def] of defs.entries()) {
      const at = single ? path : `${path}.${i}`;
      if (seen.has(def.name)) issues.push({ field: `${at}.name`, code: 'duplicate', message: `${at}.name '${def.name}' is used by another field` });
      seen.add(def.name);
      issues.push(...definitionProblems(def, at).map((p) => ({ ...p, message: `${p.field.replace(/\.[a-z_]+$/, '')}: ${p.message}` })));
      for (const [key, target] of [
        ['reference_target', def.reference_target],
        ['items.reference_target', def.items?.reference_target],
      ] as const) {
        if (target && !(await this.referenceable(m, target, ownSlug))) {
          issues.push({ field: `${at}.${key}`, code: 'not_found', message: `${at}.${key} names no object with records: '${target}'` });
        }
      }
    }
    if (issues.length) throw validationFailed(issues);
  }

  private async referenceable(m: EntityManager, target: string, ownSlug: string): Promise<boolean> {
    if ((REFERENCEABLE_BUILT_INS as readonly string[]).includes(target) || target === ownSlug) return true;
    const rows: unknown[] = await m.query(`SELECT 1 FROM object_types WHERE slug = $1`, [target]);
    return rows.length > 0;
  }
}

/** An object whose custom fields change: its definitions, and how its stored values and definitions are rewritten. */
interface FieldOwner {
  fields: CustomFieldDefinition[];
  /** Names no custom field may take (the built-in fields). */
  reserved: Set<string>;
  /** The named field, or a 404. */
  field(name: string): CustomFieldDefinition;
  present(fields: CustomFieldDefinition[]): ObjectSchemaView;
  /** Moves every stored value of `from` to `to`, or removes it (null). */
  moveValues(from: string, to: string | null): Promise<unknown>;
  save(fields: CustomFieldDefinition[]): Promise<ObjectSchemaView>;
}

/**
 * Moves the stored values of custom field `from` to `to` in a jsonb column, or removes them when `to` is
 * null, in the rows holding one (of object type `objectTypeId` when given).
 */
function moveValues(m: EntityManager, table: string, column: string, from: string, to: string | null, objectTypeId?: string): Promise<unknown> {
  const params: unknown[] = [from];
  let set = `${column} - $1::text`;
  if (to !== null) {
    params.push(to);
    set = `(${column} - $1::text) || jsonb_build_object($2::text, ${column} -> $1::text)`;
  }
  let where = `${column} ? $1::text`;
  if (objectTypeId !== undefined) {
    params.push(objectTypeId);
    where += ` AND object_type_id = $${params.length}`;
  }
  return m.query(`UPDATE ${table} SET ${column} = ${set} WHERE ${where}`, params);
}

function duplicateField(name: string, what: string): DomainError {
  return DomainError.conflict(`A field named '${name}' already exists: ${what}.`, [
    { field: 'name', code: 'duplicate', message: `name '${name}' is already ${what}` },
  ]);
}

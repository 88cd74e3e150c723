import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsDefined,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { IfPresent, IsOneOf, NonEmptyText, Rules } from '../dto-helpers';
import { SortablePageQuery } from '../paging';
import {
  ARRAY_ITEM_TYPES,
  ArrayItemType,
  ENFORCEMENT_LEVELS,
  EnforcementLevel,
  FIELD_NAME_SHAPE,
  FIELD_TYPES,
  FieldType,
  INHERITED_NAMES,
  OBJECT_TYPE_STATUSES,
  ObjectTypeStatus,
  SchemaLimits,
  SLUG_SHAPE,
} from './field-types';

const SLUG_MESSAGE = 'must start with a lowercase letter and hold only a-z, 0-9 and _ (at most 63 characters)';
/** A slug, or a field name (`FIELD_NAME_SHAPE`). */
const Slug = (shape = SLUG_SHAPE) => Rules(IsString({ message: '$property must be a string' }), Matches(shape, { message: `$property ${SLUG_MESSAGE}` }));
/** The slug or name of something new: also not a name every JavaScript object has (answered `reserved`). */
const NewName = (shape = SLUG_SHAPE) =>
  Rules(
    Slug(shape),
    ValidateBy({
      name: 'reservedName',
      validator: {
        validate: (value) => typeof value !== 'string' || !INHERITED_NAMES.has(value),
        defaultMessage: (args) => `$property '${args?.value}' is a reserved name`,
      },
    }),
  );

class EnumValuesRule {
  @IsOptional()
  @IsArray({ message: 'enum_values must be an array of strings' })
  @ArrayMinSize(1, { message: 'enum_values must hold at least one value' })
  @ArrayMaxSize(SchemaLimits.enumValues, { message: `enum_values may hold at most ${SchemaLimits.enumValues} values` })
  @ArrayUnique({ message: 'enum_values must not repeat a value' })
  @IsString({ each: true, message: 'enum_values must be an array of strings' })
  @Length(1, SchemaLimits.enumValueLength, { each: true, message: `each enum value must be 1 to ${SchemaLimits.enumValueLength} characters` })
  enum_values?: string[];

  @IsOptional()
  @Slug()
  reference_target?: string;
}

/** The item definition of an array field. */
export class ItemDefinitionDto extends EnumValuesRule {
  @IsDefined({ message: 'type is required' })
  @IsOneOf(ARRAY_ITEM_TYPES)
  type!: ArrayItemType;
}

/** A custom field definition: the body of POST /objects/:slug/fields and each entry of `fields`. */
export class FieldDefinitionDto extends EnumValuesRule {
  @IsDefined({ message: 'name is required' })
  @NewName(FIELD_NAME_SHAPE)
  name!: string;

  @IsOptional()
  @NonEmptyText(SchemaLimits.fieldLabel)
  label?: string;

  @IsDefined({ message: 'type is required' })
  @IsOneOf(FIELD_TYPES)
  type!: FieldType;

  @IsOptional()
  @IsBoolean({ message: 'required must be a boolean' })
  required?: boolean;

  @IsOptional()
  @IsBoolean({ message: 'unique must be a boolean' })
  unique?: boolean;

  /** Found by GET /search (custom objects' string, email, url and phone fields; docs/search.md). */
  @IsOptional()
  @IsBoolean({ message: 'searchable must be a boolean' })
  searchable?: boolean;

  @IsOptional()
  @IsObject({ message: 'items must be an item definition object' })
  @ValidateNested()
  @Type(() => ItemDefinitionDto)
  items?: ItemDefinitionDto;
}

/**
 * Body of PATCH /objects/:slug/fields/:name: a new name (stored values move to it) and a new label. The
 * type and its rules cannot change: stored values were checked against them.
 */
export class UpdateFieldDefinitionDto {
  @IfPresent()
  @NewName(FIELD_NAME_SHAPE)
  name?: string;

  @IfPresent()
  @NonEmptyText(SchemaLimits.fieldLabel)
  label?: string;
}

export class CreateObjectTypeDto {
  @IsDefined({ message: 'name is required' })
  @NonEmptyText(SchemaLimits.objectName)
  name!: string;

  @IsDefined({ message: 'slug is required' })
  @NewName()
  slug!: string;

  @IsOptional()
  @IsOneOf(ENFORCEMENT_LEVELS)
  enforcement_level?: EnforcementLevel;

  @IsOptional()
  @IsArray({ message: 'fields must be an array of field definitions' })
  @ArrayMaxSize(SchemaLimits.fieldsPerObject, { message: `fields may hold at most ${SchemaLimits.fieldsPerObject} definitions` })
  @ValidateNested({ each: true })
  @Type(() => FieldDefinitionDto)
  fields?: FieldDefinitionDto[];
}

/** PATCH /objects/:slug. Fields are added with POST /objects/:slug/fields; the slug never changes. */
export class UpdateObjectTypeDto {
  @IfPresent()
  @NonEmptyText(SchemaLimits.objectName)
  name?: string;

  @IfPresent()
  @IsOneOf(ENFORCEMENT_LEVELS)
  enforcement_level?: EnforcementLevel;

  @IfPresent()
  @IsOneOf(OBJECT_TYPE_STATUSES)
  status?: ObjectTypeStatus;
}

export class ListObjectTypesQuery extends SortablePageQuery {
  @IsOptional()
  @IsOneOf(OBJECT_TYPE_STATUSES)
  status?: ObjectTypeStatus;
}

/** Body of record create and update: the values, checked against the object's fields per its enforcement level. */
export class ObjectRecordInputDto {
  @IsDefined({ message: 'values is required' })
  @IsObject({ message: 'values must be a JSON object' })
  values!: Record<string, unknown>;
}

export class UpdateObjectRecordDto {
  @IsOptional()
  @IsObject({ message: 'values must be a JSON object' })
  values?: Record<string, unknown>;
}

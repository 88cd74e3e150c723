import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsRFC3339, IsString, Length, Matches, Max, MaxLength, Min, ValidateIf, ValidationOptions } from 'class-validator';
import { IsMetadata } from './metadata';
import { SchemaField } from './schema/schema-field';

/** Identifier shapes accepted in request bodies and filters (see libs/common/src/ids.ts). */
export const idShape = (prefix: string) => new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);

/**
 * The one rule for every `*_id` field of a body or a filter: the identifier shape of the type it names,
 * so a malformed id is a 400 naming the field, and only a well-formed unknown one a 404. `each` for
 * arrays of ids.
 */
export function IsIdOf(prefix: string, field: string, options: Pick<ValidationOptions, 'each'> = {}): PropertyDecorator {
  const what = options.each ? `${field} must hold ${prefix}_ identifiers` : `${field} must be a ${prefix}_ identifier`;
  return Matches(idShape(prefix), { message: what, each: options.each });
}

/**
 * The two idioms for a field a PATCH may leave out. `@IsOptional()` (class-validator's): absent or null
 * skips the rules, for fields null clears. `@IfPresent()`: absent skips them, null is checked and
 * rejected, for fields that always have a value (a name, a status).
 */
export const IfPresent = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

/** Present and not null: optional on update, but null is still checked (and rejected) by the field's rules. */
export const IfPresentAndNotNull = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined && value !== null);

/** Trims and lowercases strings; other types pass through so the type rule reports them. */
export const Normalise = (): PropertyDecorator => Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value));

/** Trims strings; other types pass through. */
export const Trim = (): PropertyDecorator => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/*
 * The rules fields share, each written once. A field's class adds whether it may be left out or be null
 * (`@IsDefined`, `@IsOptional`, `@IfPresent`), which is what differs between a create and an update.
 * Messages name the field through class-validator's `$property`.
 */

/**
 * Property decorators as one, listed as they would be stacked above the property. They are applied as a
 * stack is, bottom first, so rules register in the order they always have: when a value breaks two of
 * them the first registered names it (`name must be 1 to 255 characters` rather than `name must be a
 * string` for a number), and the documented schemas list their keywords in that order.
 */
export const Rules = (...decorators: PropertyDecorator[]): PropertyDecorator => applyDecorators(...[...decorators].reverse());

/** One of `values`, which the message lists. */
export const IsOneOf = (values: readonly string[]): PropertyDecorator => IsIn(values, { message: `$property must be one of ${values.join(', ')}` });

/** A string of at most `max` characters. */
export const Text = (max: number): PropertyDecorator =>
  Rules(IsString({ message: '$property must be a string' }), MaxLength(max, { message: `$property must be at most ${max} characters` }));

/** A string of 1 to `max` characters. */
export const NonEmptyText = (max: number): PropertyDecorator =>
  Rules(IsString({ message: '$property must be a string' }), Length(1, max, { message: `$property must be 1 to ${max} characters` }));

/** An integer from 0 to `max`; `kind` words what the integer is, e.g. `an integer number of cents`. */
export const WholeNumber = (max: number, kind = 'an integer'): PropertyDecorator =>
  Rules(
    IsInt({ message: `$property must be ${kind}` }),
    Min(0, { message: '$property must be zero or more' }),
    Max(max, { message: `$property must be at most ${max}` }),
  );

/** A list filter on a date-time, such as `created_after`. */
export const DateTimeFilter = (): PropertyDecorator => Rules(IsOptional(), IsRFC3339({ message: '$property must be an RFC 3339 date-time' }));

/** `metadata` of a create: optional, and null counts as not given. */
export const MetadataInput = (): PropertyDecorator => Rules(IsOptional(), IsMetadata());

/** The id of a record of the object `target` (its slug); GET /schema shows the field as a reference to it. */
export const RefersTo = (target: string, prefix: string, field: string): PropertyDecorator =>
  Rules(SchemaField({ reference_target: target }), IsIdOf(prefix, field));

/** A link a record may have to a contact, company, deal or team member: optional, and null unlinks. */
const link = (target: string, prefix: string, field: string) => (): PropertyDecorator => Rules(IsOptional(), RefersTo(target, prefix, field));
export const ContactLink = link('contacts', 'cont', 'contact_id');
export const CompanyLink = link('companies', 'comp', 'company_id');
export const DealLink = link('deals', 'deal', 'deal_id');
export const OwnerLink = link('users', 'user', 'owner_id');

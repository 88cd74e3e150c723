import { Transform } from 'class-transformer';
import { ValidateIf, ValidationOptions, Matches } from 'class-validator';

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
export const Normalise = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value));

/** Trims strings; other types pass through. */
export const Trim = (): PropertyDecorator => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

import { Transform } from 'class-transformer';
import { ValidateIf, ValidationOptions, Matches } from 'class-validator';

/** Identifier shapes accepted in request bodies and filters (see libs/common/src/ids.ts). */
export const idShape = (prefix: string) => new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`);

export function IsIdOf(prefix: string, field: string, options?: ValidationOptions): PropertyDecorator {
  return Matches(idShape(prefix), { message: `${field} must be a ${prefix}_ identifier`, ...options });
}

/** Present in the body (possibly null): PATCH validates only what was sent; null is checked by the nullable rule. */
export const IfPresent = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

/** Present and not null: optional on update, but null is still checked (and rejected) by the field's rules. */
export const IfPresentAndNotNull = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined && value !== null);

/** Trims and lowercases strings; other types pass through so the type rule reports them. */
export const Normalise = (): PropertyDecorator =>
  Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value));

/** Trims strings; other types pass through. */
export const Trim = (): PropertyDecorator => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

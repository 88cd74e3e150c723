import { ValidateBy, ValidationOptions } from 'class-validator';

/** Limits on `metadata`, the same on every resource that has it. */
export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_BYTES = 16 * 1024;

/** Why a metadata value is unacceptable, or undefined when it is fine. */
export function metadataProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object';
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS) return `may have at most ${METADATA_MAX_KEYS} keys`;
  if (keys.some((k) => k.length === 0 || k.length > METADATA_MAX_KEY_LENGTH)) return `keys must be 1 to ${METADATA_MAX_KEY_LENGTH} characters`;
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > METADATA_MAX_BYTES) return `may be at most ${METADATA_MAX_BYTES} bytes of JSON`;
  return undefined;
}

/** `metadata`: a JSON object of at most 50 keys (1 to 40 characters each) and 16 KiB serialised. */
export function IsMetadata(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isMetadata',
      validator: {
        validate: (value) => metadataProblem(value) === undefined,
        defaultMessage: (args) => `${args?.property ?? 'metadata'} ${metadataProblem(args?.value) ?? 'is invalid'}`,
      },
    },
    options,
  );
}

import { registerDecorator, ValidationOptions } from 'class-validator';

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_BYTES = 16 * 1024;

/** Why a metadata value is unacceptable, or undefined when it is fine. */
export function metadataProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'metadata must be a JSON object';
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS) return `metadata may have at most ${METADATA_MAX_KEYS} keys`;
  const longKey = keys.find((k) => k.length === 0 || k.length > METADATA_MAX_KEY_LENGTH);
  if (longKey !== undefined) return `metadata keys must be 1 to ${METADATA_MAX_KEY_LENGTH} characters`;
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > METADATA_MAX_BYTES) return `metadata may be at most ${METADATA_MAX_BYTES} bytes of JSON`;
  return undefined;
}

/** A JSON object of at most 50 keys (each 1 to 40 characters) and 16 KiB once serialized. */
export function IsWebhookMetadata(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isWebhookMetadata',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => metadataProblem(value) === undefined,
        defaultMessage: (args) => metadataProblem(args?.value) ?? 'metadata is invalid',
      },
    });
  };
}

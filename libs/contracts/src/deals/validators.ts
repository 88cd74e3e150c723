import { registerDecorator, ValidationOptions } from 'class-validator';

export const METADATA_MAX_KEYS = 50;
export const METADATA_MAX_KEY_LENGTH = 40;
export const METADATA_MAX_BYTES = 16 * 1024;

/** Why a metadata value is unacceptable, or undefined when it is fine. */
export function metadataProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'metadata must be a JSON object';
  const keys = Object.keys(value);
  if (keys.length > METADATA_MAX_KEYS) return `metadata may hold at most ${METADATA_MAX_KEYS} keys`;
  const long = keys.find((k) => k.length === 0 || k.length > METADATA_MAX_KEY_LENGTH);
  if (long !== undefined) return `metadata keys must be 1 to ${METADATA_MAX_KEY_LENGTH} characters`;
  if (Buffer.byteLength(JSON.stringify(value), 'utf8') > METADATA_MAX_BYTES) {
    return `metadata may be at most ${METADATA_MAX_BYTES} bytes of JSON`;
  }
  return undefined;
}

/** A metadata object within the documented limits (keys, key length, serialized size). */
export function IsMetadata(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isMetadata',
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

let currencies: Set<string> | undefined;

/** ISO 4217 codes known to the runtime's ICU data. */
export function isCurrencyCode(value: unknown): boolean {
  if (typeof value !== 'string' || !/^[A-Z]{3}$/.test(value)) return false;
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  return currencies.has(value);
}

export function IsCurrencyCode(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isCurrencyCode',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: { validate: (value: unknown) => isCurrencyCode(value) },
    });
  };
}

/** Uppercases strings so `usd` is accepted as `USD`; other values pass through to fail validation. */
export function upperCase({ value }: { value: unknown }): unknown {
  return typeof value === 'string' ? value.toUpperCase() : value;
}

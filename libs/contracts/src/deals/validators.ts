import { registerDecorator, ValidationOptions } from 'class-validator';

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

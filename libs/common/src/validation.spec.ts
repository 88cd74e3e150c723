import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsOptional, IsString, Max, MaxLength, ValidateNested } from 'class-validator';
import { DomainError } from '@crm/contracts';
import { validateInput } from './validation';

class Address {
  @IsDefined()
  @IsString()
  city!: string;
}

class Person {
  @IsDefined()
  @IsString()
  @MaxLength(5)
  name!: string;

  @IsOptional()
  @IsInt()
  @Max(150)
  age?: number;

  @IsOptional()
  @ValidateNested()
  @Type(() => Address)
  address?: Address;
}

function failure(input: unknown): DomainError {
  try {
    validateInput(Person, input);
  } catch (err) {
    return err as DomainError;
  }
  throw new Error('expected a validation failure');
}

describe('validateInput', () => {
  it('returns an instance of the class for valid input', () => {
    const person = validateInput(Person, { name: 'Ada', address: { city: 'London' } });
    expect(person).toBeInstanceOf(Person);
    expect(person.address).toBeInstanceOf(Address);
  });

  it('names every bad field once, with dotted paths into nested objects', () => {
    const err = failure({ age: 'old', address: { city: 7 }, extra: true });
    expect(err.code).toBe('validation_failed');
    expect(err.details).toEqual([
      { field: 'extra', code: 'unknown_field', message: "unknown field 'extra'" },
      { field: 'name', code: 'required', message: 'name should not be null or undefined' },
      { field: 'age', code: 'invalid_value', message: expect.stringMatching(/^age /) },
      { field: 'address.city', code: 'invalid_value', message: 'address.city must be a string' },
    ]);
    expect(err.message).toBe('4 fields are invalid: extra, name, age, address.city');
  });

  it('uses the one issue as the message when there is one', () => {
    const err = failure({ name: 'Adelaide' });
    expect(err.details).toEqual([{ field: 'name', code: 'invalid_value', message: expect.stringContaining('name') }]);
    expect(err.message).toBe(err.details![0].message);
  });

  it('refuses a body that is not a JSON object', () => {
    for (const input of [[1], 'text', 3]) {
      const err = failure(input);
      expect(err).toMatchObject({ code: 'invalid_request', message: 'request body must be a JSON object' });
    }
    // An absent body is an empty object, so required fields are what is reported.
    expect(failure(undefined).details).toEqual([expect.objectContaining({ field: 'name', code: 'required' })]);
  });
});

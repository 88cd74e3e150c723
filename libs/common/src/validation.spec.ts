import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsDefined, IsInt, IsOptional, IsString, Max, MaxLength, ValidateNested } from 'class-validator';
import { DomainError } from '@crm/contracts';
import { decodeCursor, encodeCursor } from './pagination';
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

describe('cursors', () => {
  it('round-trip the sort key of the list they belong to', () => {
    expect(decodeCursor('contacts', encodeCursor('contacts', 'cont_01'), 'string')).toBe('cont_01');
    expect(decodeCursor('events', encodeCursor('events', 1234), 'number')).toBe(1234);
    expect(decodeCursor('events', undefined, 'number')).toBeUndefined();
  });

  it('refuse a cursor of another list, a wrong key type, or garbage, as invalid_cursor', () => {
    const bad = [
      encodeCursor('deals', 'deal_01'),
      encodeCursor('contacts', 12),
      encodeCursor('contacts', 1.5),
      'not a cursor!',
      Buffer.from('{"l":"contacts"').toString('base64url'),
      Buffer.from('null').toString('base64url'),
    ];
    for (const raw of bad) {
      let error: unknown;
      try {
        decodeCursor('contacts', raw, 'string');
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({ code: 'invalid_request', details: [{ field: 'cursor', code: 'invalid_cursor' }] });
    }
    expect(() => decodeCursor('events', encodeCursor('events', 2 ** 60), 'number')).toThrow('cursor is not valid');
  });
});

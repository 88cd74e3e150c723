import { CreateContactDto, UpdateContactDto } from '@crm/contracts';
import { getMetadataStorage } from 'class-validator';
import { CONTACT_FIELDS, newContactColumns } from './contact-rows';

/** The fields a request class validates, as the API names them. */
const fieldsOf = (type: Function) => [
  ...new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(type, '', true, false)
      .map((m) => m.propertyName),
  ),
];

/** Kept by every record's columns (BUILT_IN_RECORD_FIELDS), not by a contact's own. */
const RECORD_FIELDS = new Set(['metadata', 'custom_fields']);

/**
 * A field added to the contact's request classes and left out of contact-rows.ts would be dropped by a
 * create or a PATCH without an error; these name it instead.
 */
describe('contact rows', () => {
  it('lets a PATCH write every field UpdateContactDto accepts', () => {
    const patched = new Set(CONTACT_FIELDS.map((f) => f.api));
    expect(fieldsOf(UpdateContactDto).filter((field) => !patched.has(field))).toEqual([]);
  });

  it('gives a new contact a column for every field CreateContactDto accepts', () => {
    const fields = fieldsOf(CreateContactDto).filter((field) => !RECORD_FIELDS.has(field));
    const dto = Object.fromEntries(fields.map((field) => [field, field === 'icp_score' ? 1 : '2030-01-01T00:00:00.000Z'])) as unknown as CreateContactDto;
    const columns = newContactColumns(dto, new Date(0)) as Record<string, unknown>;
    const propOf = new Map(CONTACT_FIELDS.map((f) => [f.api, f.prop]));
    const dropped = fields.filter((field) => {
      const prop = propOf.get(field);
      return prop === undefined || columns[prop] === null || columns[prop] === undefined;
    });
    expect(dropped).toEqual([]);
  });
});

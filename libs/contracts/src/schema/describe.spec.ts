import { BUILT_IN_OBJECTS } from './built-in-objects';
import { acceptsCustomFields } from './built-in-schema';
import { describeWritable, hasCustomFieldsContainer, labelOf } from './describe';

describe('field definitions from validators', () => {
  const fieldsOf = (slug: string) => {
    const object = BUILT_IN_OBJECTS.find((o) => o.slug === slug)!;
    return describeWritable(object.create, object.update);
  };

  it('describes the contact email as a required, unique email and stage as an enum', () => {
    const fields = fieldsOf('contacts');
    if (process.env.DUMP_SCHEMA)
      console.log(
        JSON.stringify(
          BUILT_IN_OBJECTS.map((o) => ({ slug: o.slug, fields: describeWritable(o.create, o.update) })),
          null,
          1,
        ),
      );
    expect(fields.find((f) => f.name === 'email')).toEqual({ name: 'email', label: 'Email', type: 'email', required: true, unique: true, max_length: 254 });
    expect(fields.find((f) => f.name === 'stage')).toEqual({
      name: 'stage',
      label: 'Stage',
      type: 'enum',
      enum_values: ['lead', 'prospect', 'customer', 'churned'],
    });
    expect(fields.find((f) => f.name === 'company_id')).toMatchObject({ type: 'reference', reference_target: 'companies' });
    expect(fields.find((f) => f.name === 'custom_fields')).toBeUndefined();
  });

  it('describes nested stage items and update-only fields', () => {
    expect(
      fieldsOf('pipelines')
        .find((f) => f.name === 'stages')
        ?.items?.fields?.map((f) => f.name),
    ).toEqual(['name', 'type', 'position', 'color', 'probability']);
    expect(fieldsOf('deals').find((f) => f.name === 'loss_reason')).toMatchObject({ type: 'string', update_only: true });
    expect(fieldsOf('deals').find((f) => f.name === 'value')).toMatchObject({ type: 'currency', min: 0 });
  });

  it('takes custom_fields in the request classes of exactly the objects that accept custom fields', () => {
    for (const object of BUILT_IN_OBJECTS) {
      const takes = hasCustomFieldsContainer(object.create) && (!object.update || hasCustomFieldsContainer(object.update));
      expect({ slug: object.slug, takes }).toEqual({ slug: object.slug, takes: acceptsCustomFields(object.slug) });
    }
  });

  it('labels fields from their names', () => {
    expect(labelOf('first_name')).toBe('First name');
    expect(labelOf('company_id')).toBe('Company');
  });
});

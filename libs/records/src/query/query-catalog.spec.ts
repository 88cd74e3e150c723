import { customFields, QueryCatalog, resolvePath } from './query-catalog';

/** resolvePath: what a GROUP BY or a metric over a query path needs from the catalog, without compiling a filter. */
describe('resolvePath', () => {
  const catalog: QueryCatalog = {
    object: 'deals',
    table: 'deals.deals',
    alias: 'd',
    fields: new Map([
      ['amount', { sql: 'd.amount', type: 'number' }],
      ['status', { sql: 'd.status', type: 'enum', values: ['open', 'won'] }],
      ['metadata', { sql: 'd.metadata', type: 'json', select: `COALESCE(d.metadata, '{}'::jsonb)` }],
      ['stage.name', { sql: 'd_stage.name', type: 'string', join: 'stage' }],
      ...customFields([{ name: 'region', label: 'Region', type: 'string' }] as never, 'd.custom_fields'),
    ]),
    joins: { stage: { alias: 'd_stage', clause: 'LEFT JOIN deals.stages d_stage ON d_stage.id = d.stage_id' } },
    remotes: { contact: { column: 'd.contact_id', object: 'contacts', via: 'contacts' } },
    present: (row) => row,
  };

  it("resolves the object's own field to its column and type, with no join", () => {
    expect(resolvePath(catalog, 'amount')).toEqual({
      kind: 'local',
      path: 'amount',
      field: catalog.fields.get('amount'),
      sql: 'd.amount',
      select: 'd.amount',
      type: 'number',
    });
    expect(resolvePath(catalog, 'status')).toMatchObject({ kind: 'local', type: 'enum', field: { values: ['open', 'won'] } });
  });

  it.each([
    [
      'a field one hop away to its joined column and the join it needs',
      'stage.name',
      {
        kind: 'local',
        sql: 'd_stage.name',
        type: 'string',
        join: { name: 'stage', alias: 'd_stage', clause: 'LEFT JOIN deals.stages d_stage ON d_stage.id = d.stage_id' },
      },
    ],
    ['a custom field to its JSON value as stored', 'custom_fields.region', { kind: 'local', type: 'string', select: `d.custom_fields->'region'` }],
    [
      'a JSON field through its own select expression',
      'metadata',
      { kind: 'local', type: 'json', sql: 'd.metadata', select: `COALESCE(d.metadata, '{}'::jsonb)` },
    ],
    [
      'a path another service keeps to its remote relation',
      'contact.email',
      { kind: 'remote', relation: 'contact', remote: { column: 'd.contact_id', object: 'contacts', via: 'contacts' } },
    ],
  ])('resolves %s', (_, path, expected) => {
    expect(resolvePath(catalog, path)).toMatchObject({ path, ...expected });
  });

  it("compares a custom field only where its stored value has the definition's type", () => {
    const resolved = resolvePath(catalog, 'custom_fields.region');
    expect(resolved?.kind === 'local' && resolved.sql).toContain(`jsonb_typeof(d.custom_fields->'region') = 'string'`);
  });

  it('answers undefined for a path the catalog does not have', () => {
    expect(resolvePath(catalog, 'nope')).toBeUndefined();
    expect(resolvePath(catalog, 'stage')).toBeUndefined();
  });
});

import { canonicalJson, diffFields, likePattern } from './field-changes';

interface Row {
  name: string | null;
  due: Date | null;
  meta: Record<string, unknown>;
}

const specs = [
  { api: 'name', prop: 'name' as const, kind: 'value' as const },
  { api: 'due_at', prop: 'due' as const, kind: 'date' as const },
  { api: 'metadata', prop: 'meta' as const, kind: 'json' as const },
];

describe('diffFields', () => {
  const row: Row = { name: 'a', due: new Date('2030-01-01T00:00:00Z'), meta: { b: 1, a: { y: 2, x: 1 } } };

  it('ignores absent fields and values equal to the stored ones', () => {
    const { set, changes } = diffFields(row, { due_at: '2030-01-01T00:00:00.000Z', metadata: { a: { x: 1, y: 2 }, b: 1 } }, specs);
    expect(set).toEqual({});
    expect(changes.changed).toEqual([]);
  });

  it('reports changed and cleared fields with their API values before and after', () => {
    const { set, changes } = diffFields(row, { name: null, due_at: '2031-01-01T00:00:00Z', metadata: null }, specs);
    expect(set).toEqual({ name: null, due: new Date('2031-01-01T00:00:00Z'), meta: {} });
    expect(changes).toEqual({
      changed: ['name', 'due_at', 'metadata'],
      previous: { name: 'a', due_at: '2030-01-01T00:00:00.000Z', metadata: row.meta },
      current: { name: null, due_at: '2031-01-01T00:00:00.000Z', metadata: {} },
    });
  });
});

describe('helpers', () => {
  it('sorts keys at every depth', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });

  it('escapes LIKE wildcards', () => {
    expect(likePattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

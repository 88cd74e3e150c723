import { canonicalJson, diffFields, sameValue } from './changes';

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

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps null members and array order, drops undefined members', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null, z: undefined })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
    expect(canonicalJson([2, 1])).not.toBe(canonicalJson([1, 2]));
  });
});

describe('sameValue', () => {
  it('treats null and absent alike', () => {
    expect(sameValue(null, undefined)).toBe(true);
    expect(sameValue(null, '')).toBe(false);
    expect(sameValue(0, null)).toBe(false);
  });

  it('compares objects whatever their key order, and not across value types inside them', () => {
    expect(sameValue({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 })).toBe(true);
    expect(sameValue({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameValue({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameValue({}, null)).toBe(false);
  });

  it('compares a number with a numeric string by value, but two strings as text', () => {
    expect(sameValue(120000, '120000')).toBe(true);
    expect(sameValue('12.50', 12.5)).toBe(true);
    expect(sameValue(BigInt(7), 7)).toBe(true);
    expect(sameValue(1, '1x')).toBe(false);
    expect(sameValue(0, '')).toBe(false);
    expect(sameValue('1.0', '1')).toBe(false);
  });

  it('compares instants, also against an ISO string', () => {
    expect(sameValue(new Date('2030-01-01T00:00:00Z'), '2030-01-01T00:00:00.000Z')).toBe(true);
    expect(sameValue('2030-01-01T01:00:00+01:00', new Date('2030-01-01T00:00:00Z'))).toBe(true);
    expect(sameValue(new Date('2030-01-01T00:00:00Z'), new Date('2030-01-01T00:00:00.001Z'))).toBe(false);
    expect(sameValue(new Date('2030-01-01T00:00:00Z'), null)).toBe(false);
    expect(sameValue(new Date('2030-01-01T00:00:00Z'), 'soon')).toBe(false);
  });
});

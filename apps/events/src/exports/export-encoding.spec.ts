import { parse } from 'csv-parse/sync';
import { rowEncoder } from './export-encoding';

/** CSV as a reader that tells a quoted empty cell from an unquoted one sees it. */
function read(text: string): Array<Record<string, string | null>> {
  return parse(text, { columns: true, cast: (value: string, context: { quoting: boolean }) => (value === '' && !context.quoting ? null : value) });
}

describe('export row encoders', () => {
  it('writes CSV with one header, null apart from an empty string, objects as JSON, and values unaltered', () => {
    const csv = rowEncoder('csv');
    const first = csv.encode([{ id: 'a', name: '', note: null, active: false, n: 2.5, meta: { k: 'x, "y"\nz' }, tags: [1, 'b'] }]);
    const second = csv.encode([{ id: 'b', name: '=SUM(A1)', note: 'line\r\nbreak', active: true, n: -0.0001, meta: {}, tags: [] }]);
    expect(first.split('\n')[0]).toBe('id,name,note,active,n,meta,tags');
    expect(second.startsWith('b,')).toBe(true);
    expect(csv.encode([])).toBe('');
    expect(read(first + second)).toEqual([
      { id: 'a', name: '', note: null, active: 'false', n: '2.5', meta: '{"k":"x, \\"y\\"\\nz"}', tags: '[1,"b"]' },
      { id: 'b', name: '=SUM(A1)', note: 'line\r\nbreak', active: 'true', n: '-0.0001', meta: '{}', tags: '[]' },
    ]);
  });

  it('refuses a row whose fields the header does not hold, rather than drop a cell', () => {
    const csv = rowEncoder('csv');
    csv.encode([{ id: 'a', name: 'x' }]);
    expect(() => csv.encode([{ id: 'b', name: 'y', extra: 1 }])).toThrow(/extra/);
  });

  it('writes NDJSON one object a line', () => {
    const rows = [
      { id: 'a', v: null },
      { id: 'b', v: { x: [1] } },
    ];
    const text = rowEncoder('ndjson').encode(rows);
    expect(text.split('\n')).toEqual([JSON.stringify(rows[0]), JSON.stringify(rows[1]), '']);
    expect(rowEncoder('ndjson').encode([])).toBe('');
  });
});

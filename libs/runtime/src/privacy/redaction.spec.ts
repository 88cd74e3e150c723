import { toRanges, undeclaredTables } from './erasure-stores';
import { blankJson, likePatterns, needlePattern, scrubJson } from './redaction';

describe('redaction rules', () => {
  const pattern = needlePattern(['ada@x.example', 'Ada Lovelace', 'Lovelace', '+44 20 1234']);

  it("takes the person's values out of another record's text, longest first, in any case", () => {
    expect(scrubJson({ subject: 'Call ADA LOVELACE at ada@x.example or +44 20 1234', n: 3, tags: ['lovelace fan'] }, pattern)).toEqual({
      subject: 'Call [redacted] at [redacted] or [redacted]',
      n: 3,
      tags: ['[redacted] fan'],
    });
  });

  it("blanks the person's own values, keeping identifiers and field names", () => {
    expect(blankJson({ contact_id: 'cont_1', email: 'ada@x.example', changed: ['email'], current: { email: 'a', score: 3 } })).toEqual({
      contact_id: 'cont_1',
      email: null,
      changed: ['email'],
      current: { email: null, score: null },
      redacted: true,
    });
  });

  it('escapes LIKE wildcards and reads positions as ranges', () => {
    expect(likePatterns(['a_b%c', 'x'])).toEqual(['%a\\_b\\%c%']);
    expect(toRanges(['7', '1', '2', '3', '9', '8'])).toEqual([
      { from: '1', to: '3' },
      { from: '7', to: '9' },
    ]);
  });

  it('names the tables a declaration accounts for none of', () => {
    const snapshot = 'column a.id text\ncolumn b.id text\ncolumn c.x int\n';
    expect(
      undeclaredTables(
        { service: 's', stores: [{ name: 'a', tables: ['a'], erase: async () => ({ deleted: 0, redacted: 0 }) }], noPersonalData: { c: 'none' } },
        snapshot,
      ),
    ).toEqual(['b']);
  });
});

import { DEFAULT_DATABASE_URL } from '@crm/common';
import { randomBytes } from 'crypto';
import fc from 'fast-check';
import { Client } from 'pg';
import { QueryRunner } from 'typeorm';
import { CustomValueFunctionsByPosition1765900000000 } from './custom-value-functions-by-position.migration';
import { CreateCustomValueFunctions1765700000000 } from './custom-value-functions.migration';

/**
 * Each property runs with its fixed seed and with this run's own for a third as many runs (PROPERTY_SEED
 * replays one; fast-check names the seed of a failure), as test/support/property-seeds.ts does for the API tests.
 */
const RUN_SEED = Number(process.env.PROPERTY_SEED) || Math.floor(Math.random() * 2 ** 31);
const withRunSeed = (seed: number, numRuns: number) => [
  { seed, numRuns },
  { seed: RUN_SEED, numRuns: Math.ceil(numRuns / 3) },
];

/**
 * The bodies of CustomValueFunctionsByPosition1765900000000 answer exactly as the first ones
 * (CreateCustomValueFunctions1765700000000) on generated values: real dates and date-times in many offsets
 * and fractions, leap days, impossible dates and times, near misses of the shape, any text, and JSON that
 * is not a string. The first bodies are installed beside the new ones under other names, from the first
 * migration's own SQL, and every value is compared in SQL to the microsecond. An expression index built
 * under the first body is then checked against the table with amcheck: it needs no REINDEX.
 *
 * Seeds: a fixed one with every run and one of the run's own (PROPERTY_SEED replays one).
 */
describe('custom_date and custom_instant by position', () => {
  const name = `crm_t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
  const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  let db: Client;

  /** Runs a migration's SQL on this client, each statement's text passed through `rewrite`. */
  const runner = (rewrite: (sql: string) => string = (sql) => sql) =>
    ({ query: (sql: string) => db.query(rewrite(sql)).then((r) => r.rows) }) as unknown as QueryRunner;
  const renamed = (sql: string) => sql.replace(/\bcustom_(date|instant)\(/g, 'first_custom_$1(');

  beforeAll(async () => {
    const admin = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    db = new Client({ connectionString: Object.assign(new URL(url), { pathname: `/${name}` }).toString() });
    await db.connect();
    await db.query(`SET TimeZone = 'UTC'`);
    await new CreateCustomValueFunctions1765700000000().up(runner(renamed));
    // As a deployment runs them: the first migration, then this one in its own transaction.
    await new CreateCustomValueFunctions1765700000000().up(runner());
    await db.query('BEGIN');
    await new CustomValueFunctionsByPosition1765900000000().up(runner());
    await db.query('COMMIT');
  });

  afterAll(async () => {
    await db?.end();
    const admin = new Client({ connectionString: Object.assign(new URL(url), { pathname: '/postgres' }).toString() });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  const pad = (n: number, width: number) => String(n).padStart(width, '0');
  /** Years mostly near now, with the calendar's edges: year 0 (invalid), 1, centuries, 9999. */
  /** Mostly in range, with each part's edges and a little past them, so that invalid dates and times come up. */
  const part = (min: number, max: number, edges: number[]) =>
    fc.oneof({ arbitrary: fc.integer({ min, max }), weight: 8 }, { arbitrary: fc.constantFrom(...edges), weight: 2 });
  /** Years mostly near now, with the calendar's edges: year 0 (invalid), 1, centuries, 9999. */
  const year = fc.oneof(
    { arbitrary: fc.integer({ min: 1990, max: 2040 }), weight: 6 },
    { arbitrary: fc.constantFrom(0, 1, 4, 100, 1600, 1900, 2000, 2100, 2400, 9999), weight: 2 },
    { arbitrary: fc.integer({ min: 0, max: 9999 }), weight: 2 },
  );
  /** 31 April, 29 February in common and leap years, month 13 and day 0 come up. */
  const calendarDate = fc
    .record({ y: year, m: part(1, 12, [0, 2, 4, 12, 13]), d: part(1, 28, [0, 29, 29, 30, 31, 32]) })
    .map(({ y, m, d }) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
  /** Fractions of one to nine digits, some all nines (rounding into the next second, minute or day). */
  const fraction = fc.oneof(
    fc.constant(''),
    fc.stringMatching(/^\.[0-9]{1,9}$/),
    fc.integer({ min: 1, max: 9 }).map((n) => `.${'9'.repeat(n)}`),
    fc.constantFrom('.5', '.0000005', '.0000015', '.9999995', '.000001', '.123456789'),
  );
  const offset = fc.oneof(
    fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+01:00', '-05:00', '+05:30', '+05:45', '-09:30', '+14:00', '-12:00', '+23:59', '-23:59', '+24:00', '+01:60'),
    fc
      .record({ sign: fc.constantFrom('+', '-'), h: part(0, 23, [0, 23, 24, 25]), m: part(0, 59, [0, 30, 45, 59, 60, 61]) })
      .map(({ sign, h, m }) => `${sign}${pad(h, 2)}:${pad(m, 2)}`),
  );
  const dateTime = fc
    .record({
      date: calendarDate,
      t: fc.constantFrom('T', 't'),
      h: part(0, 23, [0, 23, 23, 24, 25]),
      mi: part(0, 59, [0, 59, 59, 60]),
      s: part(0, 59, [0, 59, 59, 60, 61]),
      fraction,
      offset,
    })
    .map(({ date, t, h, mi, s, fraction, offset }) => `${date}${t}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${fraction}${offset}`);
  /** A value one edit away from the shape: a character changed, dropped or added anywhere. */
  const nearMiss = (valid: fc.Arbitrary<string>) =>
    fc.tuple(valid, fc.nat(), fc.constantFrom('', ' ', 'x', '0', '-', ':', '.', 'T', 'Z', '+', '\n', '٣', '０')).map(([text, at, ch]) => {
      const i = at % (text.length + 1);
      return at % 2 ? text.slice(0, i) + ch + text.slice(i + 1) : text.slice(0, i) + ch + text.slice(i);
    });
  /** JSON a value kept under `none` or `soft` enforcement might hold instead. */
  const notAString = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constant(20250101),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  );
  // jsonb holds no NUL character, so no stored value does.
  const anyText = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replace(/\0/g, ''));
  const value = (shaped: fc.Arbitrary<string>, other: fc.Arbitrary<string>) =>
    fc.oneof(
      { arbitrary: shaped, weight: 6 },
      { arbitrary: nearMiss(shaped), weight: 3 },
      { arbitrary: other, weight: 1 },
      { arbitrary: anyText, weight: 1 },
      { arbitrary: notAString, weight: 1 },
    );

  interface Tally {
    values: number;
    answered: number;
  }
  /**
   * Compares `fn` with the first body on each batch of values, to the microsecond (IS DISTINCT FROM on the
   * typed results), and counts the values and the non-null answers, so a test can see it compared real
   * answers and not only nulls.
   */
  async function compare(
    fn: 'custom_date' | 'custom_instant',
    values: fc.Arbitrary<unknown>,
    seedRuns: Array<{ seed: number; numRuns: number }>,
  ): Promise<Tally> {
    const tally: Tally = { values: 0, answered: 0 };
    for (const { seed, numRuns } of seedRuns) {
      await fc.assert(
        fc.asyncProperty(fc.array(values, { minLength: 50, maxLength: 150 }), async (batch) => {
          const { rows } = await db.query(
            `SELECT v, ${fn}(v)::text AS now, first_${fn}(v)::text AS first, (${fn}(v) IS NOT NULL) AS answered,
                    ${fn}(v) IS DISTINCT FROM first_${fn}(v) AS differs
               FROM jsonb_array_elements($1::jsonb) AS x(v)`,
            [JSON.stringify(batch)],
          );
          tally.values += rows.length;
          tally.answered += rows.filter((r) => r.answered).length;
          expect(rows.filter((r) => r.differs)).toEqual([]);
        }),
        { seed, numRuns },
      );
    }
    return tally;
  }

  it('custom_date answers as the first body on generated values', async () => {
    const tally = await compare('custom_date', value(calendarDate, dateTime), withRunSeed(20261207, 100));
    // Real dates are a good share of the values, and so are nulls.
    expect(tally.answered).toBeGreaterThan(tally.values * 0.25);
    expect(tally.answered).toBeLessThan(tally.values * 0.75);
  });

  it('custom_instant answers as the first body on generated values', async () => {
    const tally = await compare('custom_instant', value(dateTime, calendarDate), withRunSeed(20261208, 100));
    expect(tally.answered).toBeGreaterThan(tally.values * 0.2);
    expect(tally.answered).toBeLessThan(tally.values * 0.75);
  });

  it('answers the calendar, offsets and fractions as documented', async () => {
    const cases: Array<[unknown, string | null]> = [
      ['2026-01-01T00:30:00+01:00', '2025-12-31 23:30:00+00'],
      ['2025-12-31t18:45:00-05:00', '2025-12-31 23:45:00+00'],
      ['2024-02-29T12:00:00Z', '2024-02-29 12:00:00+00'],
      ['2000-02-29T00:00:00+05:30', '2000-02-28 18:30:00+00'],
      ['2025-02-29T12:00:00Z', null],
      ['1900-02-29T12:00:00Z', null],
      ['2025-04-31T00:00:00Z', null],
      ['2025-01-01T24:00:00Z', null],
      ['2025-01-01T00:00:60Z', null],
      ['2025-01-01T00:00:00+24:00', null],
      ['2025-01-01T00:00:00', null],
      ['2025-01-01 00:00:00Z', null],
      ['2025-12-31T23:59:59.9999999Z', '2026-01-01 00:00:00+00'],
      ['2025-06-01T10:00:00.1234564Z', '2025-06-01 10:00:00.123456+00'],
      [20250101, null],
      [null, null],
    ];
    const { rows } = await db.query(`SELECT custom_instant(v)::text AS at FROM jsonb_array_elements($1::jsonb) AS x(v)`, [
      JSON.stringify(cases.map(([v]) => v)),
    ]);
    expect(rows.map((r) => r.at)).toEqual(cases.map(([, at]) => at));
    const dates = await db.query(`SELECT custom_date(v)::text AS d FROM jsonb_array_elements($1::jsonb) AS x(v)`, [
      JSON.stringify(['2024-02-29', '2025-02-29', '2100-02-29', '2400-02-29', '0000-01-01', '2025-13-01', '2025-06-31', '2025-6-01', ' 2025-06-01', 7]),
    ]);
    expect(dates.rows.map((r) => r.d)).toEqual(['2024-02-29', null, null, '2400-02-29', null, null, null, null, null, null]);
    const sqlNull = await db.query(`SELECT custom_instant(NULL) AS at, custom_date(NULL) AS d`);
    expect(sqlNull.rows).toEqual([{ at: null, d: null }]);
  });

  it('an index built under the first body matches the table under the new one, with no REINDEX', async () => {
    await db.query(`CREATE EXTENSION IF NOT EXISTS amcheck`);
    await db.query(`CREATE TABLE kept (id serial PRIMARY KEY, v jsonb)`);
    const sample = fc.sample(value(dateTime, calendarDate), { seed: 20261209, numRuns: 2000 });
    await db.query(`INSERT INTO kept (v) SELECT v FROM jsonb_array_elements($1::jsonb) AS x(v)`, [JSON.stringify(sample)]);
    // The index is built with the first body in place, as the services built theirs before this migration.
    await db.query('BEGIN');
    await new CreateCustomValueFunctions1765700000000().up(runner());
    await db.query(`CREATE INDEX kept_instant ON kept (custom_instant(v))`);
    await db.query('COMMIT');
    await db.query('BEGIN');
    await new CustomValueFunctionsByPosition1765900000000().up(runner());
    await db.query('COMMIT');
    // Every row's key, computed again with the new body, must be found in the index as built.
    await db.query(`SELECT bt_index_parent_check('kept_instant', heapallindexed => true)`);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM kept WHERE custom_instant(v) IS NOT NULL`);
    expect(rows[0].n).toBeGreaterThan(200);
  });
});

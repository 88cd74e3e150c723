import { CreateCustomValueFunctions1765700000000 } from '@crm/records';
import { Client } from 'pg';
import { QueryRunner } from 'typeorm';
import { percentile } from './bench-stack';
import { Statement } from './query-1m.cases';

const VALUES = Number(process.env.BENCH_CALL_VALUES ?? 20_000);
const ROUNDS = 5;

/**
 * What one call of `custom_instant` costs, beside the body it replaced and PostgreSQL's own cast, on the
 * seeded `renews_at` values: the first body (CreateCustomValueFunctions1765700000000) is installed beside
 * the current one as `first_custom_instant` (and `first_custom_date`), from that migration's own SQL, in the stack's database (which
 * the run drops). Each is timed over the same VALUES well-formed values (the cast fails on the others)
 * in one statement, on one process (no parallel workers), ROUNDS times; the scan alone is subtracted.
 * Then the given id-order range statement is timed with the first body in place of the current one, so
 * the case's cost with either body is measured in the same run.
 */
export async function customValueCalls(pg: Client, idOrderRange?: Statement): Promise<string[]> {
  const runner = {
    query: (sql: string) => pg.query(sql.replace(/\bcustom_(date|instant)\(/g, 'first_custom_$1(')).then((r) => r.rows),
  } as unknown as QueryRunner;
  await new CreateCustomValueFunctions1765700000000().up(runner);
  await pg.query(`SET statement_timeout = 0`);
  await pg.query(`SET max_parallel_workers_per_gather = 0`);
  await pg.query(
    `CREATE TEMP TABLE call_values AS
       SELECT custom_fields->'renews_at' AS v FROM contacts WHERE custom_instant(custom_fields->'renews_at') IS NOT NULL ORDER BY id LIMIT $1`,
    [VALUES],
  );
  const [{ n, fractions }] = (await pg.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE v #>> '{}' LIKE '%.%')::int AS fractions FROM call_values`))
    .rows;
  const time = async (expression: string): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const start = process.hrtime.bigint();
      await pg.query(`SELECT count(${expression}) FROM call_values`);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return percentile(times, 50);
  };
  const scan = await time('v');
  const perCall = async (expression: string) => (((await time(expression)) - scan) * 1000) / n;
  const rows: Array<[string, number]> = [
    ['first body (`regexp_match` with capturing groups)', await perCall('first_custom_instant(v)')],
    ['current body (`~`, parts by position)', await perCall('custom_instant(v)')],
    ["PostgreSQL's cast, `(v #>> '{}')::timestamptz` (STABLE, not indexable)", await perCall(`(v #>> '{}')::timestamptz`)],
  ];
  const [{ differ }] = (await pg.query(`SELECT count(*)::int AS differ FROM call_values WHERE custom_instant(v) IS DISTINCT FROM first_custom_instant(v)`))
    .rows;
  const lines = [
    `Per call over ${n} seeded renews_at values (${fractions} with a fraction), median of ${ROUNDS} rounds, the scan alone (${scan.toFixed(1)} ms) subtracted; ` +
      `the two bodies differ on ${differ} of them:`,
    '',
    '| function | µs a call |',
    '|---|---:|',
    ...rows.map(([what, us]) => `| ${what} | ${us.toFixed(2)} |`),
    '',
  ];
  if (idOrderRange) {
    const first = { text: idOrderRange.text.replace(/\bcustom_instant\(/g, 'first_custom_instant('), params: idOrderRange.params };
    await pg.query(`RESET max_parallel_workers_per_gather`);
    const timeStatement = async (statement: Statement) => {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const start = process.hrtime.bigint();
        await pg.query(statement.text, statement.params);
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      return percentile(times, 50);
    };
    lines.push(
      `The id-order range on renews_at, direct SQL, median of ${ROUNDS}: ${(await timeStatement(first)).toFixed(1)} ms with the first body, ` +
        `${(await timeStatement(idOrderRange)).toFixed(1)} ms with the current one.`,
      '',
    );
  }
  await pg.query(`DROP FUNCTION first_custom_instant(jsonb)`);
  await pg.query(`DROP FUNCTION first_custom_date(jsonb)`);
  await pg.query(`RESET statement_timeout`);
  return lines;
}

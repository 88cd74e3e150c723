import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Custom dates and date-times are stored as the JSON text the client wrote (its offset is information), so
 * queries read them through these functions to compare, sort and bucket them as their type.
 *
 * Both are IMMUTABLE, so expression indexes may hold them, and that is honest: neither casts text with
 * `::timestamptz` (STABLE, as it reads TimeZone and DateStyle for text that does not say its zone). The
 * shape is checked first, an offset or Z required, and the instant is built from its parts with
 * functions that read no setting: `make_timestamp` and `timezone('UTC', …)`. They never fail: a value that
 * is not a string, or not a real date (30 February, hour 24, offset +24:00), is NULL, so a value kept under
 * enforcement `none` or `soft` cannot make a query or an index build fail.
 */
export class CreateCustomValueFunctions1765700000000 implements MigrationInterface {
  name = 'CreateCustomValueFunctions1765700000000';

  async up(q: QueryRunner): Promise<void> {
    // Making a function takes no lock on a table; the lock_timeout bounds any wait on the catalog all the
    // same. It runs in its transaction (migrate() in @crm/common), so the setting ends with it.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    // A fraction past microseconds is rounded by interval arithmetic, as PostgreSQL's own input does.
    await q.query(`
      CREATE OR REPLACE FUNCTION custom_instant(value jsonb) RETURNS timestamptz
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
      DECLARE
        m text[];
        y integer;
        mo integer;
        d integer;
        last_day integer;
        shift interval := interval '0';
      BEGIN
        IF jsonb_typeof(value) <> 'string' THEN
          RETURN NULL;
        END IF;
        m := regexp_match(value #>> '{}',
          '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2}(?:[.][0-9]{1,9})?)(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))$');
        IF m IS NULL THEN
          RETURN NULL;
        END IF;
        y := m[1]::integer;
        mo := m[2]::integer;
        d := m[3]::integer;
        -- Worked out before the IF, whose condition PL/pgSQL reads only up to the first THEN.
        last_day := CASE WHEN mo = 2 THEN CASE WHEN y % 4 = 0 AND (y % 100 <> 0 OR y % 400 = 0) THEN 29 ELSE 28 END
                         WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
        IF y < 1 OR mo NOT BETWEEN 1 AND 12 OR d NOT BETWEEN 1 AND last_day
           OR m[4]::integer > 23 OR m[5]::integer > 59 OR m[6]::numeric >= 60
           OR coalesce(m[8]::integer, 0) > 23 OR coalesce(m[9]::integer, 0) > 59 THEN
          RETURN NULL;
        END IF;
        IF m[7] IS NOT NULL THEN
          shift := make_interval(hours => m[8]::integer, mins => m[9]::integer);
          IF m[7] = '-' THEN
            shift := -shift;
          END IF;
        END IF;
        RETURN timezone('UTC', make_timestamp(y, mo, d, m[4]::integer, m[5]::integer, 0) + m[6]::numeric * interval '1 second' - shift);
      END
      $fn$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION custom_date(value jsonb) RETURNS date
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
      DECLARE
        m text[];
        y integer;
        mo integer;
        d integer;
        last_day integer;
      BEGIN
        IF jsonb_typeof(value) <> 'string' THEN
          RETURN NULL;
        END IF;
        m := regexp_match(value #>> '{}', '^([0-9]{4})-([0-9]{2})-([0-9]{2})$');
        IF m IS NULL THEN
          RETURN NULL;
        END IF;
        y := m[1]::integer;
        mo := m[2]::integer;
        d := m[3]::integer;
        -- Worked out before the IF, whose condition PL/pgSQL reads only up to the first THEN.
        last_day := CASE WHEN mo = 2 THEN CASE WHEN y % 4 = 0 AND (y % 100 <> 0 OR y % 400 = 0) THEN 29 ELSE 28 END
                         WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
        IF y < 1 OR mo NOT BETWEEN 1 AND 12 OR d NOT BETWEEN 1 AND last_day THEN
          RETURN NULL;
        END IF;
        RETURN make_date(y, mo, d);
      END
      $fn$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION IF EXISTS custom_date(jsonb)`);
    await q.query(`DROP FUNCTION IF EXISTS custom_instant(jsonb)`);
  }
}

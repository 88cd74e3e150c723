import { MigrationInterface, QueryRunner } from 'typeorm';
import { CreateCustomValueFunctions1765700000000 } from './custom-value-functions.migration';

/** The shape of an RFC 3339 date-time with an offset or Z, with no capturing group. */
const INSTANT_SHAPE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.][0-9]{1,9})?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$';
const DATE_SHAPE = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';

/**
 * `custom_date` and `custom_instant` (CreateCustomValueFunctions1765700000000) give the same answers with
 * cheaper bodies. The first bodies took a value's parts with `regexp_match` and capturing groups, which
 * PostgreSQL's regular expressions answer on a slow path: about 60 µs a call, and over 350 µs for a
 * date-time without a fraction, so a range on a custom date-time that filters rows one by one took
 * seconds at a million records (docs/benchmarks.md). Now the shape is tested with `~` and no capturing
 * group, and once it has matched every part sits at a known position, so `substr` takes it. `custom_instant`
 * reads its calendar date through `custom_date`, so the calendar check (month lengths, leap years) is
 * written once, and builds the instant with `make_time`, which rounds a fraction past microseconds as the
 * first body's interval arithmetic did (both round the same double to the nearest microsecond).
 *
 * Same signatures, still IMMUTABLE, and for every input the same result as before (a test compares them
 * with the first bodies on generated inputs), so the expression indexes over `custom_instant` built by the
 * services (`<table>_cf_<field>_instant`) stay valid and need no REINDEX: PostgreSQL does not rebuild
 * an index when a function it uses is replaced, which is harmless exactly when every result is unchanged.
 * The previous release calls the same functions and gets the same answers. Replacing a function takes no
 * lock on a table; the lock_timeout bounds any wait on the catalog all the same.
 */
export class CustomValueFunctionsByPosition1765900000000 implements MigrationInterface {
  name = 'CustomValueFunctionsByPosition1765900000000';

  async up(q: QueryRunner): Promise<void> {
    // Migrations run in a transaction each (migrate() in @crm/common), so this ends with it.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    // Both are made in the schema that comes first on the search path, the service's own.
    const [{ schema }] = await q.query(`SELECT quote_ident(current_schema()) AS schema`);
    await q.query(`
      CREATE OR REPLACE FUNCTION custom_date(value jsonb) RETURNS date
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
      DECLARE
        t text;
        y integer;
        mo integer;
        d integer;
        last_day integer;
      BEGIN
        IF jsonb_typeof(value) <> 'string' THEN
          RETURN NULL;
        END IF;
        t := value #>> '{}';
        IF t !~ '${DATE_SHAPE}' THEN
          RETURN NULL;
        END IF;
        y := left(t, 4)::integer;
        mo := substr(t, 6, 2)::integer;
        d := right(t, 2)::integer;
        -- Worked out before the IF, whose condition PL/pgSQL reads only up to the first THEN.
        last_day := CASE WHEN mo = 2 THEN CASE WHEN y % 4 = 0 AND (y % 100 <> 0 OR y % 400 = 0) THEN 29 ELSE 28 END
                         WHEN mo IN (4, 6, 9, 11) THEN 30 ELSE 31 END;
        IF y < 1 OR mo NOT BETWEEN 1 AND 12 OR d NOT BETWEEN 1 AND last_day THEN
          RETURN NULL;
        END IF;
        RETURN make_date(y, mo, d);
      END
      $fn$`);
    // Positions in 'YYYY-MM-DDThh:mm:ss[.f]<zone>': the seconds start at 18 and run up to the zone, which is
    // one character (Z) or six (+hh:mm). Past the shape test every character is ASCII, so length counts bytes.
    // custom_date is called by its schema's name: what evaluates an index's expression outside a request
    // (ANALYZE under autovacuum, amcheck, a restore; on PostgreSQL 17 CREATE INDEX itself) runs with a
    // search_path that does not hold the service's schema. Every other function here is in pg_catalog.
    await q.query(`
      CREATE OR REPLACE FUNCTION custom_instant(value jsonb) RETURNS timestamptz
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
      DECLARE
        t text;
        day date;
        n integer;
        zone integer;
        h integer;
        mi integer;
        s double precision;
        oh integer := 0;
        om integer := 0;
        shift interval := interval '0';
      BEGIN
        IF jsonb_typeof(value) <> 'string' THEN
          RETURN NULL;
        END IF;
        t := value #>> '{}';
        IF t !~ '${INSTANT_SHAPE}' THEN
          RETURN NULL;
        END IF;
        day := ${schema}.custom_date(to_jsonb(left(t, 10)));
        IF day IS NULL THEN
          RETURN NULL;
        END IF;
        n := length(t);
        zone := CASE WHEN right(t, 1) IN ('Z', 'z') THEN 1 ELSE 6 END;
        h := substr(t, 12, 2)::integer;
        mi := substr(t, 15, 2)::integer;
        s := substr(t, 18, n - 17 - zone)::double precision;
        IF zone = 6 THEN
          oh := substr(t, n - 4, 2)::integer;
          om := right(t, 2)::integer;
        END IF;
        IF h > 23 OR mi > 59 OR s >= 60 OR oh > 23 OR om > 59 THEN
          RETURN NULL;
        END IF;
        IF zone = 6 THEN
          shift := make_interval(hours => oh, mins => om);
          IF substr(t, n - 5, 1) = '-' THEN
            shift := -shift;
          END IF;
        END IF;
        RETURN timezone('UTC', day + make_time(h, mi, s) - shift);
      END
      $fn$`);
  }

  /** The first bodies again (same results, so indexes stay valid this way too). */
  async down(q: QueryRunner): Promise<void> {
    await new CreateCustomValueFunctions1765700000000().up(q);
  }
}

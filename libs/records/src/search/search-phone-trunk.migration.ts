import { MigrationInterface, QueryRunner } from 'typeorm';

/** `search_phone_rank` as CreateSearchFunctions1765200000000 made it: digits compared with their leading zeros. */
const WITH_ZEROS = `SELECT CASE WHEN length(digits) >= 7 AND length(search_digits(phone)) >= 7
  AND (right(search_digits(phone), length(digits)) = digits OR right(digits, length(search_digits(phone))) = search_digits(phone))
  THEN 0.95 ELSE 0 END`;

/**
 * GET /search's phone rule compares the digits without their leading zeros (a national trunk 0, an
 * international 00), as the duplicate rule `same_phone` does: `020 7946 0018` finds `+44 20 7946 0018` and
 * the other way round, where one's digits (`02079460018`) did not end with the other's (`442079460018`).
 * The body is still one expression, which PostgreSQL inlines into the search statement. Same signature;
 * the previous release calls it the same way and finds the same numbers and more.
 */
export class SearchPhoneWithoutTrunkZero1767800000100 implements MigrationInterface {
  name = 'SearchPhoneWithoutTrunkZero1767800000100';

  async up(q: QueryRunner): Promise<void> {
    // Migrations run in a transaction each, so this ends with it; no table is locked.
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(`
      CREATE OR REPLACE FUNCTION search_phone_rank(phone text, digits text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN length(ltrim(digits, '0')) >= 7 AND length(ltrim(search_digits(phone), '0')) >= 7
        AND (right(ltrim(search_digits(phone), '0'), length(ltrim(digits, '0'))) = ltrim(digits, '0')
          OR right(ltrim(digits, '0'), length(ltrim(search_digits(phone), '0'))) = ltrim(search_digits(phone), '0'))
        THEN 0.95 ELSE 0 END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL lock_timeout = '5s'`);
    await q.query(
      `CREATE OR REPLACE FUNCTION search_phone_rank(phone text, digits text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ ${WITH_ZEROS} $$`,
    );
  }
}

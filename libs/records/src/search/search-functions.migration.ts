import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The SQL functions GET /search and the duplicate routes rank with (docs/search.md), created in the
 * service's own schema. Index expressions may only call immutable functions: `unaccent` is stable (its
 * dictionary could change), so `search_fold` names the dictionary and is declared immutable, the usual
 * way to index accent-free text; the indexes must be rebuilt if the unaccent rules are ever edited.
 */
export class CreateSearchFunctions1765200000000 implements MigrationInterface {
  name = 'CreateSearchFunctions1765200000000';

  async up(q: QueryRunner): Promise<void> {
    // Several services create these extensions in one database; the locks stop two of them racing.
    for (const extension of ['pg_trgm', 'unaccent', 'fuzzystrmatch']) {
      await q.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`crm:extension:${extension}`]);
      await q.query(`CREATE EXTENSION IF NOT EXISTS ${extension} WITH SCHEMA public`);
    }
    // Lower case without accents: what every searchable text is compared as.
    await q.query(`
      CREATE FUNCTION search_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$`);
    await q.query(`
      CREATE FUNCTION search_digits(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT regexp_replace($1, '[^0-9]', '', 'g') $$`);
    // The last seven digits: the part of a phone number that a country code or trunk prefix never changes.
    await q.query(`
      CREATE FUNCTION search_phone_key(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT CASE WHEN length(regexp_replace($1, '[^0-9]', '', 'g')) >= 7 THEN right(regexp_replace($1, '[^0-9]', '', 'g'), 7) END $$`);
    // An email as duplicates compare it: lower case, without a +tag in the local part.
    await q.query(`
      CREATE FUNCTION search_email_key(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT lower(regexp_replace($1, '\\+[^@]*@', '@')) $$`);
    // A domain as duplicates compare it: no scheme, path, port or leading www.
    await q.query(`
      CREATE FUNCTION search_domain_key(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT nullif(regexp_replace(regexp_replace(lower(btrim($1)), '^([a-z][a-z0-9+.-]*://)?(www\\.)?', ''), '[:/?#].*$', ''), '') $$`);
    /*
     * How well folded text f matches a folded query: 0.95 when equal; 0.7 when every query word starts a
     * word of f; 0.45 or 0.35 when words of five letters or more are one or two edits from a word of f
     * (two at most in all); otherwise 0.
     */
    await q.query(`
      CREATE FUNCTION search_rank(f text, q text) RETURNS numeric LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
      DECLARE
        fw text[];
        w text;
        v text;
        best int;
        d int;
        typos int := 0;
      BEGIN
        IF f IS NULL OR q IS NULL THEN RETURN 0; END IF;
        f := btrim(regexp_replace(f, '\\s+', ' ', 'g'));
        q := btrim(regexp_replace(q, '\\s+', ' ', 'g'));
        IF f = '' OR q = '' THEN RETURN 0; END IF;
        IF f = q THEN RETURN 0.95; END IF;
        fw := regexp_split_to_array(f, '[^[:alnum:]]+');
        FOREACH w IN ARRAY regexp_split_to_array(q, '[^[:alnum:]]+') LOOP
          CONTINUE WHEN w = '';
          best := NULL;
          FOREACH v IN ARRAY fw LOOP
            IF left(v, length(w)) = w THEN best := 0; EXIT; END IF;
            IF length(w) >= 5 THEN
              d := public.levenshtein_less_equal(w, v, 2);
              IF d <= 2 AND (best IS NULL OR d < best) THEN best := d; END IF;
            END IF;
          END LOOP;
          IF best IS NULL THEN RETURN 0; END IF;
          typos := typos + best;
        END LOOP;
        RETURN CASE typos WHEN 0 THEN 0.7 WHEN 1 THEN 0.45 WHEN 2 THEN 0.35 ELSE 0 END;
      END $$`);
    // An email also matches exactly by its local part or its domain.
    await q.query(`
      CREATE FUNCTION search_email_rank(e text, q text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN e = q THEN 0.95 WHEN split_part(e, '@', 1) = q OR split_part(e, '@', 2) = q THEN 0.9 ELSE search_rank(e, q) END $$`);
    // A domain matches exactly with or without www.
    await q.query(`
      CREATE FUNCTION search_domain_rank(d text, q text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN regexp_replace(d, '^www\\.', '') = regexp_replace(q, '^www\\.', '') THEN 0.95 ELSE search_rank(d, q) END $$`);
    // The same number when one's digits end with the other's (a country code or trunk 0 in front), seven digits at least.
    await q.query(`
      CREATE FUNCTION search_phone_rank(phone text, digits text) RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE
      AS $$ SELECT CASE WHEN length(digits) >= 7 AND length(search_digits(phone)) >= 7
        AND (right(search_digits(phone), length(digits)) = digits OR right(digits, length(search_digits(phone))) = search_digits(phone))
        THEN 0.95 ELSE 0 END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const fn of [
      'search_phone_rank(text, text)',
      'search_domain_rank(text, text)',
      'search_email_rank(text, text)',
      'search_rank(text, text)',
      'search_domain_key(text)',
      'search_email_key(text)',
      'search_phone_key(text)',
      'search_digits(text)',
      'search_fold(text)',
    ]) {
      await q.query(`DROP FUNCTION ${fn}`);
    }
  }
}

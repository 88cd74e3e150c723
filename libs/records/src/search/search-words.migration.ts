import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Word search (docs/search.md). A trigram index makes every row that shares a few trigrams with a query a
 * candidate, and ranking those took seconds at a million contacts; a word index (`tsvector`, GIN) answers
 * "every word of q starts a word of the row" directly, and typos are looked up in a dictionary of the
 * words the service holds (`search_words`) before the word index is asked for the words found there.
 */
export class CreateSearchWords1765400000000 implements MigrationInterface {
  name = 'CreateSearchWords1765400000000';

  async up(q: QueryRunner): Promise<void> {
    /*
     * Index expressions name their functions with the service's schema: a restore (pg_dump sets an empty
     * search_path) or a maintenance command under a restricted search_path must still find them.
     */
    const [{ schema }]: Array<{ schema: string }> = await q.query(`SELECT quote_ident(current_schema()) AS schema`);
    // Folded text as words separated by one space: the words every rule compares.
    await q.query(`
      CREATE FUNCTION search_text_words(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT pg_catalog.btrim(pg_catalog.regexp_replace(${schema}.search_fold($1), '[^[:alnum:]]+', ' ', 'g')) $$`);
    await q.query(`
      CREATE FUNCTION search_tsv(text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT pg_catalog.to_tsvector('pg_catalog.simple'::regconfig, ${schema}.search_text_words($1)) $$`);
    // Folded text with its blanks collapsed: what "the field equals q" compares.
    await q.query(`
      CREATE FUNCTION search_norm(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT btrim(regexp_replace(search_fold($1), '\\s+', ' ', 'g')) $$`);
    // a and b differ only by two adjacent letters swapped: one typo, as a person makes it.
    await q.query(`
      CREATE FUNCTION search_swapped(a text, b text) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT length(a) = length(b) AND a <> b AND EXISTS (
        SELECT 1 FROM generate_series(1, length(a) - 1) i
        WHERE substr(a, i, 1) = substr(b, i + 1, 1) AND substr(a, i + 1, 1) = substr(b, i, 1)
          AND left(a, i - 1) = left(b, i - 1) AND substr(a, i + 2) = substr(b, i + 2)) $$`);
    // Typos between a query word w and a word v, when w may have any: 4 letters one, 5 or more two; words with digits none.
    await q.query(`
      CREATE FUNCTION search_typos(w text, v text) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      AS $$ SELECT CASE
        WHEN length(w) < 4 OR w ~ '[0-9]' OR v ~ '[0-9]' THEN 3
        ELSE (SELECT CASE WHEN d = 2 AND search_swapped(w, v) THEN 1 WHEN d <= k THEN d ELSE 3 END
          FROM (SELECT public.levenshtein_less_equal(w, v, 2) AS d, CASE WHEN length(w) >= 5 THEN 2 ELSE 1 END AS k) x) END $$`);
    // How well a field matches a query: the rules of docs/search.md, with typos as search_typos counts them.
    await q.query(`
      CREATE OR REPLACE FUNCTION search_rank(f text, q text) RETURNS numeric LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
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
            d := search_typos(w, v);
            IF d <= 2 AND (best IS NULL OR d < best) THEN best := d; END IF;
          END LOOP;
          IF best IS NULL THEN RETURN 0; END IF;
          typos := typos + best;
        END LOOP;
        RETURN CASE typos WHEN 0 THEN 0.7 WHEN 1 THEN 0.45 WHEN 2 THEN 0.35 ELSE 0 END;
      END $$`);
    /*
     * Every word of letters a service holds (the dictionary typos are looked up in). Rows are only added,
     * never locked: two writers adding the same new word at once may both add it, which costs a duplicate
     * row and never a wait.
     */
    await q.query(`CREATE TABLE search_words (word text NOT NULL)`);
    await q.query(`CREATE INDEX search_words_word ON search_words (word)`);
    await q.query(`
      CREATE FUNCTION search_learn(texts text[]) RETURNS void LANGUAGE sql SET search_path FROM CURRENT
      AS $$ INSERT INTO search_words (word)
        SELECT DISTINCT w FROM unnest(texts) t, unnest(string_to_array(search_text_words(t), ' ')) w
        WHERE length(w) >= 2 AND w !~ '[0-9]' AND NOT EXISTS (SELECT 1 FROM search_words s WHERE s.word = w) $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION search_learn(text[])`);
    await q.query(`DROP TABLE search_words`);
    await q.query(`DROP FUNCTION search_typos(text, text)`);
    await q.query(`DROP FUNCTION search_swapped(text, text)`);
    await q.query(`DROP FUNCTION search_norm(text)`);
    await q.query(`DROP FUNCTION search_tsv(text)`);
    await q.query(`DROP FUNCTION search_text_words(text)`);
  }
}

/**
 * A table's word index over `text` (SQL over its columns, null-safe) and the statement triggers that teach
 * the dictionary the words of each statement's new rows; the dictionary learns the rows already there.
 * Each table has its own trigger function with static SQL, so its plan is cached: a generic function
 * building the statement per call (EXECUTE) tripled the database time of a single-row insert.
 */
export async function createWordIndex(q: QueryRunner, table: string, text: string): Promise<void> {
  await q.query(`CREATE INDEX ${table}_search_words ON ${table} USING gin (search_tsv(${text}))`);
  await q.query(`
    CREATE FUNCTION ${table}_search_learn() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      INSERT INTO search_words (word)
      SELECT DISTINCT w FROM search_new_rows, unnest(string_to_array(search_text_words(${text}), ' ')) w
      WHERE length(w) >= 2 AND w !~ '[0-9]' AND NOT EXISTS (SELECT 1 FROM search_words s WHERE s.word = w);
      RETURN NULL;
    END $$`);
  for (const event of ['insert', 'update']) {
    await q.query(
      `CREATE TRIGGER ${table}_search_learn_${event} AFTER ${event.toUpperCase()} ON ${table} REFERENCING NEW TABLE AS search_new_rows
       FOR EACH STATEMENT EXECUTE FUNCTION ${table}_search_learn()`,
    );
  }
  await q.query(`SELECT search_learn(array(SELECT ${text} FROM ${table}))`);
}

export async function dropWordIndex(q: QueryRunner, table: string): Promise<void> {
  for (const event of ['insert', 'update']) await q.query(`DROP TRIGGER ${table}_search_learn_${event} ON ${table}`);
  await q.query(`DROP FUNCTION ${table}_search_learn()`);
  await q.query(`DROP INDEX ${table}_search_words`);
}

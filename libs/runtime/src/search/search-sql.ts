import { SearchHitView, SearchPosition } from '@crm/contracts';
import { EntityManager } from 'typeorm';

/** How a field's folded value is compared with the query (docs/search.md). */
export type SearchRule = 'text' | 'email' | 'domain' | 'phone';

/** One searchable field of an object. */
export interface SearchField {
  /** The name `matched` reports. */
  name: string;
  /** SQL of the field's value (the row is `t`). */
  value: string;
  rule: SearchRule;
  /** Names, emails, domains and phones weigh 1; titles, subjects and custom fields 0.9. */
  weight: 1 | 0.9;
  /** An email or domain field with an index on its key (`search_email_key`, `search_domain_key`): exact matches are found there. */
  keyed?: boolean;
}

/** One object as search reads it from its table. */
export interface SearchTarget {
  object: string;
  table: string;
  title: string;
  subtitle: string;
  fields: SearchField[];
  /** SQL of the row's searchable text, exactly as the table's word index (`search_tsv(…)`) is built on it. */
  words: string;
  /** An extra condition on the rows (a custom object's type). */
  where?: string;
}

/** Exact and prefix hits score at least this (0.9 × 0.7), typo hits at most 0.45: the two are found apart. */
const FUZZY_BELOW = 0.5;

/** What a query is compared as: its folded text (in SQL), its digits when it could be a phone number, and itself as an id. */
export interface SearchInput {
  q: string;
  after?: SearchPosition;
  limit: number;
}

const PHONE_SHAPE = /^[+0-9()./\s-]+$/;
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/;

interface Folded {
  /** The folded query with its blanks collapsed. */
  folded: string;
  words: string[];
}

type Row = { object: string; id: string; title: string | null; subtitle: string | null; score: string; fields: Record<string, [number, string]> };

/**
 * One service's hits for a query over its targets, best first, paged by (score desc, object, id) so that
 * slices of several services merge into one order. Exact and prefix hits come first from the word index,
 * the id and the phone and email keys; only when they do not fill the page are typos looked up (in the
 * dictionary of words, then in the word index). Only the page's rows are described (title, matched).
 */
export async function searchSlice(manager: EntityManager, targets: readonly SearchTarget[], input: SearchInput): Promise<SearchHitView[]> {
  if (!targets.length) return [];
  const [{ folded, words }]: Folded[] = await manager.query(
    `SELECT search_norm($1) AS folded, array_remove(string_to_array(search_text_words($1), ' '), '') AS words`,
    [input.q],
  );
  const email = EMAIL_SHAPE.test(input.q.trim());
  const digits = PHONE_SHAPE.test(input.q) ? input.q.replace(/\D/g, '') : '';
  const tsWords = words.map((w) => `'${w}'`);
  const base = {
    q: input.q,
    digits: digits.length >= 7 ? digits : '',
    folded: folded ?? '',
    // An email-shaped query matches only exactly: its words must all be words of the row.
    candidates: tsWords.length ? (email ? tsWords.join(' & ') : tsWords.map((w) => `${w}:*`).join(' & ')) : null,
    prefix: tsWords.length && !email ? tsWords.map((w) => `${w}:*`).join(' & ') : null,
    words,
    patterns: words.length && !email ? words.map((w) => `% ${w}%`) : null,
  };
  const hits: Row[] = [];
  if (!input.after || input.after[0] >= FUZZY_BELOW) {
    hits.push(...(await manager.query(...statement(targets, base, 'exact', input.after, input.limit))));
  }
  if (hits.length < input.limit && base.prefix) {
    const typos = await typoQuery(manager, words);
    if (typos) {
      const after = input.after && input.after[0] < FUZZY_BELOW ? input.after : undefined;
      hits.push(...(await manager.query(...statement(targets, { ...base, candidates: typos }, 'typo', after, input.limit - hits.length))));
    }
  }
  return hits.map((row) => ({
    object: row.object,
    id: row.id,
    title: row.title ?? row.id,
    subtitle: row.subtitle || null,
    score: Number(row.score),
    matched: Object.entries(row.fields)
      .filter(([, [score]]) => score > 0)
      .sort(([a, [x]], [b, [y]]) => y - x || (a < b ? -1 : 1))
      .map(([field, [, value]]) => ({ field, value })),
  }));
}

/**
 * The query's words as a tsquery that also names every word of the dictionary within a word's allowed
 * typos, or null when no word has any (then there are no typo hits).
 */
async function typoQuery(manager: EntityManager, words: string[]): Promise<string | null> {
  const near: Array<{ w: string; words: string[] }> = await manager.query(
    `SELECT q.w, array_agg(DISTINCT s.word) AS words FROM unnest($1::text[]) q(w)
     JOIN search_words s ON length(q.w) >= 4 AND q.w !~ '[0-9]'
       AND length(s.word) BETWEEN length(q.w) - 2 AND length(q.w) + 2
       AND public.levenshtein_less_equal(q.w, s.word, 2) <= 2 AND search_typos(q.w, s.word) < 3
     GROUP BY q.w`,
    [words],
  );
  if (!near.length) return null;
  const variants = new Map(near.map((n) => [n.w, n.words]));
  return words.map((w) => `(${[`'${w}':*`, ...(variants.get(w) ?? []).map((v) => `'${v}'`)].join(' | ')})`).join(' & ');
}

interface Params {
  q: string;
  words: string[];
  patterns: string[] | null;
  digits: string;
  folded: string;
  candidates: string | null;
  prefix: string | null;
}

/** $1 q, $2 its digits, $3 folded, $4 the candidates' tsquery, $5 the prefix tsquery, $6 the words, $7 their LIKE patterns. */
function statement(
  targets: readonly SearchTarget[],
  input: Params,
  phase: 'exact' | 'typo',
  after: SearchPosition | undefined,
  limit: number,
): [string, unknown[]] {
  const params: unknown[] = [input.q, input.digits, input.folded, input.candidates, input.prefix, input.words.join(' '), input.patterns];
  const param = (value: unknown) => `$${params.push(value)}`;
  const objects = targets.map((target) => param(target.object));
  let position = 'true';
  if (after) {
    const [score, object, id] = after;
    position = `(x.score < ${param(String(score))}::numeric OR (x.score = $${params.length}::numeric AND (x.object COLLATE "C", x.id COLLATE "C") > (${param(object)}, ${param(id)})))`;
  }
  const top = param(limit);
  const ranked = targets.map((target, i) => {
    const exact = phase === 'exact';
    const ranks = target.fields.map((f, j) => `${f.weight === 1 ? '' : `${f.weight} * `}${exact ? exactRankSql(f, `w.w${j}`) : rankSql(f)}`);
    const best = ranks.length > 1 ? `greatest(${ranks.join(', ')})` : ranks[0];
    const score = `CASE WHEN t.id = $1::text THEN 1 ELSE round(${best}, 4) END`;
    const where = [
      exact ? `(${exactCandidates(target).join(' OR ')})` : `search_tsv(${target.words}) @@ $4::tsquery`,
      ...(target.where ? [target.where] : []),
    ].join(' AND ');
    // Each field is folded into its words once per row (OFFSET 0 keeps the planner from repeating the expression per use).
    const folded = exact ? `CROSS JOIN LATERAL (SELECT ${target.fields.map((f, j) => `search_text_words(${f.value}) AS w${j}`).join(', ')} OFFSET 0) w` : '';
    const keep = exact ? `x.score > 0` : `x.score > 0 AND x.score < ${FUZZY_BELOW}`;
    // OFFSET 0 again: the score is computed once per row, not once for the filter and again for the sort.
    return `(SELECT x.* FROM (SELECT ${objects[i]}::text AS object, t.id, ${score} AS score FROM ${target.table} t ${folded} WHERE ${where} OFFSET 0) x
      WHERE ${keep} AND ${position} ORDER BY x.score DESC, x.id COLLATE "C" LIMIT ${top})`;
  });
  const described = targets.map((target, i) => {
    const fields = target.fields.map((f) => `${param(f.name)}::text, jsonb_build_array(${f.weight === 1 ? '' : `${f.weight} * `}${rankSql(f)}, ${f.value})`);
    return `SELECT ${target.title} AS title, ${target.subtitle} AS subtitle,
        CASE WHEN t.id = $1::text THEN jsonb_build_object('id', jsonb_build_array(1, t.id)) ELSE jsonb_build_object(${fields.join(', ')}) END AS fields
      FROM ${target.table} t WHERE top.object = ${objects[i]}::text AND t.id = top.id`;
  });
  const sql = `
    -- Names every parameter's type, for the targets that never read some of them.
    WITH typed AS (SELECT $1::text, $2::text, $3::text, $4::tsquery, $5::tsquery, $6::text, $7::text[]),
    top AS (SELECT * FROM (${ranked.join('\nUNION ALL\n')}) u ORDER BY u.score DESC, u.object COLLATE "C", u.id COLLATE "C" LIMIT ${top})
    SELECT top.*, d.* FROM top CROSS JOIN LATERAL (${described.join('\nUNION ALL\n')}) d
    ORDER BY top.score DESC, top.object COLLATE "C", top.id COLLATE "C"`;
  return [sql, params];
}

/** The index-served conditions that make a row a candidate for an exact or prefix hit. */
function exactCandidates(target: SearchTarget): string[] {
  const out = [`t.id = $1::text`, `search_tsv(${target.words}) @@ $4::tsquery`];
  for (const f of target.fields) {
    if (f.rule === 'phone') out.push(`($2::text <> '' AND search_phone_key(${f.value}) = right($2::text, 7))`);
    if (f.rule === 'email' && f.keyed) out.push(`search_email_key(${f.value}) = search_email_key($1::text)`);
    if (f.rule === 'domain' && f.keyed) out.push(`search_domain_key(${f.value}) = search_domain_key($1::text)`);
  }
  return out;
}

/**
 * The exact and prefix rules alone, cheap enough to rank every candidate with: `words` is the field's
 * folded words, $6 the query's words, $7 one LIKE pattern per query word (a word of the field starts with
 * it; null for an email-shaped query, which matches only exactly).
 */
function exactRankSql(field: SearchField, words: string): string {
  const word = `CASE WHEN ${words} = $6::text THEN 0.95 WHEN (' ' || ${words}) LIKE ALL ($7::text[]) THEN 0.7 ELSE 0 END`;
  switch (field.rule) {
    case 'email':
      return `CASE WHEN lower(${field.value}) = $3::text THEN 0.95
        WHEN split_part(lower(${field.value}), '@', 1) = $3::text OR split_part(lower(${field.value}), '@', 2) = $3::text THEN 0.9
        ELSE coalesce(${word}, 0) END`;
    case 'domain':
      return `CASE WHEN regexp_replace(lower(${field.value}), '^www\\.', '') = regexp_replace($3::text, '^www\\.', '') THEN 0.95 ELSE coalesce(${word}, 0) END`;
    case 'phone':
      return `search_phone_rank(${field.value}, $2::text)`;
    default:
      return `coalesce(${word}, 0)`;
  }
}

/** Every rule, typos included (plpgsql): run on typo candidates and on a page's rows. */
function rankSql(field: SearchField): string {
  switch (field.rule) {
    case 'email':
      return `search_email_rank(search_fold(${field.value}), $3::text)`;
    case 'domain':
      return `search_domain_rank(search_fold(${field.value}), $3::text)`;
    case 'phone':
      return `search_phone_rank(${field.value}, $2::text)`;
    default:
      return `search_rank(search_fold(${field.value}), $3::text)`;
  }
}

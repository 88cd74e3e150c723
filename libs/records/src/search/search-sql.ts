import { SearchHitView, SearchMetaView, SearchPosition } from '@crm/contracts';
import { Env, intVar } from '@crm/common';
import { createHash } from 'crypto';
import { EntityManager } from 'typeorm';
import type { RunStatement } from '../query/query-budget';

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

/** What a search past its budget (QueryBudget) is told to change. */
export const SEARCH_HINT = 'Search for a longer or rarer word, fewer words, or fewer objects (objects=...).';

/**
 * The settings of a search's transaction. No parallel plans: the exact statement relies on its UNION ALL's
 * branches being read in order (a Parallel Append would interleave them), and its scans are small. Generic
 * plans for its prepared statements: they are as fast as the custom plans for every kind of query (their
 * scans are the same index scans whatever the values), and the custom plans PostgreSQL would keep choosing
 * for them are planned on every execution, which took longer than running them.
 */
export const SEARCH_SETTINGS: Record<string, string> = { max_parallel_workers_per_gather: '0', plan_cache_mode: 'force_generic_plan' };

/** Exact and prefix hits score at least this (0.9 × 0.7), typo hits at most 0.45: the two are found apart. */
const FUZZY_BELOW = 0.5;

/**
 * Most rows of one object the exact tier ranks for a query's words (SEARCH_WORD_CANDIDATES). Ranking a row
 * folds its fields, about 17 µs: `com`, held by half a million contacts at a million, took 12 s to rank in full.
 */
export const SEARCH_WORD_CANDIDATES = 1000;
/** Most words of a query looked up in the dictionary for typos: each is one index look-up and one more alternative for the word index. */
export const SEARCH_TYPO_WORDS = 3;
/** Words sharing fewer trigrams than this with a query word are not read from the dictionary (docs/search.md). */
const TYPO_TRIGRAM_SIMILARITY = 0.06;

export interface SearchSettings {
  searchWordCandidates: number;
}

export function loadSearchSettings(env: Env): SearchSettings {
  return { searchWordCandidates: intVar(env, 'SEARCH_WORD_CANDIDATES', SEARCH_WORD_CANDIDATES, { min: 1, max: 100_000 }) };
}

/** How a slice is read, and where it says what it left out. */
export interface SearchSliceOptions {
  wordCandidates?: number;
  /** Filled with what the answer's `meta` says (docs/search.md): the words and objects the exact tier did not rank by, the words looked up for typos. */
  meta?: SearchMetaView;
}

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

/** Runs one statement: its text, or a named prepared statement's `{ name, text }` passed through to the driver. */
type Query = (sql: string, params: unknown[]) => Promise<any[]>;

type Row = { object: string; id: string; title: string | null; subtitle: string | null; score: string; fields: Record<string, [number, string]> };

/**
 * One service's hits for a query over its targets, best first, paged by (score desc, object, id) so that
 * slices of several services merge into one order. Exact and prefix hits come first from the word index,
 * the id and the phone and email keys; only when they do not fill the page are typos looked up (in the
 * dictionary of words, then in the word index). Only the page's rows are described (title, matched).
 */
export async function searchSlice(
  source: RunStatement | EntityManager,
  targets: readonly SearchTarget[],
  input: SearchInput,
  options: SearchSliceOptions = {},
): Promise<SearchHitView[]> {
  if (!targets.length) return [];
  // The services run it under a QueryBudget (its statements share the caller's deadline); the benchmark
  // hands it a plain transaction's manager.
  const manager: Query = typeof source === 'function' ? source : (sql, params) => source.query(sql, params);
  // SEARCH_SETTINGS, set here as well for a caller whose transaction did not open with them (the benchmark).
  const [{ folded, words }]: Folded[] = await manager(
    `SELECT search_norm($1) AS folded, array_remove(string_to_array(search_text_words($1), ' '), '') AS words,
       set_config('max_parallel_workers_per_gather', '0', true) AS serial, set_config('plan_cache_mode', 'force_generic_plan', true) AS generic`,
    [input.q],
  );
  const email = EMAIL_SHAPE.test(input.q.trim());
  const digits = PHONE_SHAPE.test(input.q) ? input.q.replace(/\D/g, '') : '';
  const tsWords = words.map((w) => `'${w}'`);
  const base = {
    q: input.q,
    digits: digits.length >= 7 ? digits : '',
    folded: folded ?? '',
    // Every exact rule's row holds each word of q whole; word starts are read by the prefix tiers, which an
    // email-shaped query (matching only exactly) has none of.
    candidates: tsWords.length ? tsWords.join(' & ') : null,
    prefix: tsWords.length && !email ? tsWords.map((w) => `${w}:*`).join(' & ') : null,
    words,
    patterns: words.length && !email ? words.map((w) => `% ${w}%`) : null,
  };
  const hits: Row[] = [];
  const meta = options.meta ?? {};
  if (!input.after || input.after[0] >= FUZZY_BELOW) {
    const capped = base.candidates
      ? await cappedTargets(manager, targets, base.candidates, options.wordCandidates ?? SEARCH_WORD_CANDIDATES, !input.after)
      : [];
    if (capped.some(Boolean)) {
      meta.skipped_words = [...new Set([...(meta.skipped_words ?? []), ...words])];
      meta.capped_objects = [...new Set([...(meta.capped_objects ?? []), ...targets.filter((_, i) => capped[i]).map((t) => t.object)])].sort();
    }
    hits.push(...(await prepared(manager, exactStatement(targets, { ...base, capped }, input.after, input.limit), !input.after)));
  }
  if (hits.length < input.limit && base.prefix) {
    const typos = await typoQuery(manager, words, meta);
    if (typos) {
      const after = input.after && input.after[0] < FUZZY_BELOW ? input.after : undefined;
      hits.push(...(await prepared(manager, typoStatement(targets, { ...base, candidates: typos }, after, input.limit - hits.length), !input.after)));
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
 * At most this many distinct statement texts are prepared by a process (so by each of its connections); a
 * prepared statement and its cached plan hold about 1.5 MB of the connection's backend memory.
 */
const PREPARED_SHAPES = 16;
const preparedNames = new Map<string, string>();

/**
 * Runs a first page's exact-and-prefix or typo statement as a named prepared statement, so that each
 * connection plans it once instead of on every request: planning their branches took longer than running
 * them for an email, a phone or an id. Its text depends only on the targets and on whether the query has
 * word starts (every value is a parameter), so a service sees a handful of texts, one per set of objects
 * searched; later pages (whose text also depends on the cursor's tier and object) and any text past the
 * first PREPARED_SHAPES run unnamed. A name is the text's hash: a connection new to the pool prepares it on
 * first use (node-postgres remembers per connection which names it has parsed), and a service's connections
 * all have its schema on their search_path, so one name is one schema's statement. PostgreSQL replans it by
 * itself after a change to a table it reads. TypeORM hands the query config to the `pg` client unchanged.
 * The search's transaction forces generic plans (searchSlice): the custom ones PostgreSQL would otherwise
 * keep choosing are planned on every execution.
 */
async function prepared<R = Row>(manager: Query, [text, values]: [string, unknown[]], firstPage: boolean): Promise<R[]> {
  let name = preparedNames.get(text);
  if (name === undefined && firstPage && preparedNames.size < PREPARED_SHAPES) {
    name = `search_${createHash('sha1').update(text).digest('hex')}`;
    preparedNames.set(text, name);
  }
  if (!name) return manager(text, values);
  try {
    return await manager({ name, text } as unknown as string, values);
  } catch (err) {
    // 0A000, "cached plan must not change result type": a newer release's migration changed the type of a
    // column this statement returns, so the connections' prepared copies can no longer run. The request fails
    // (its transaction is aborted), and the text runs unnamed from then on in this process.
    if ((err as { code?: string }).code === '0A000') preparedNames.set(text, '');
    throw err;
  }
}

/**
 * Per target, whether its rows holding every word of q whole are more than `cap`: the exact tier then does
 * not rank them (docs/search.md), and lists them with the word starts instead. Each probe reads at most
 * cap + 1 rows of the word index's matches, so a word held by half the table costs the index scan, not the
 * ranking. When they together are that many, so is each word alone: no rarer word of q could narrow them.
 */
async function cappedTargets(manager: Query, targets: readonly SearchTarget[], words: string, cap: number, firstPage: boolean): Promise<boolean[]> {
  const probes = targets.map(
    (
      target,
      i,
    ) => `(SELECT count(*) FROM (SELECT 1 FROM ${target.table} t WHERE search_tsv(${target.words}) @@ $1::tsquery${target.where ? ` AND ${target.where}` : ''}
      LIMIT $2::int) c) AS n${i}`,
  );
  const [row]: Array<Record<string, string>> = await prepared<Record<string, string>>(manager, [`SELECT ${probes.join(', ')}`, [words, cap + 1]], firstPage);
  return targets.map((_, i) => Number(row[`n${i}`]) > cap);
}

/**
 * The query's words as a tsquery that also names every word of the dictionary within a word's allowed
 * typos, or null when no word has any (then there are no typo hits). At most SEARCH_TYPO_WORDS words are
 * looked up, the longest (a tie goes to the earlier word), each through the dictionary's trigram index:
 * only words sharing trigrams with it are compared. The others must still start a word of the row.
 */
async function typoQuery(manager: Query, words: string[], meta: SearchMetaView): Promise<string | null> {
  const eligible = [...new Set(words)].filter((w) => w.length >= 4 && !/[0-9]/.test(w));
  const looked = [...eligible].sort((a, b) => b.length - a.length || eligible.indexOf(a) - eligible.indexOf(b)).slice(0, SEARCH_TYPO_WORDS);
  if (!looked.length) return null;
  if (looked.length < eligible.length) meta.typo_words = [...new Set([...(meta.typo_words ?? []), ...looked])];
  // `%` is what the index serves, against pg_trgm.similarity_threshold: the uncorrelated sub-select sets it
  // for this transaction and runs once, before the index is scanned.
  const near: Array<{ w: string; words: string[] }> = await manager(
    `SELECT q.w, array_agg(DISTINCT s.word) AS words FROM unnest($1::text[]) q(w)
     JOIN search_words s ON s.word OPERATOR(public.%) q.w
       AND (SELECT set_config('pg_trgm.similarity_threshold', '${TYPO_TRIGRAM_SIMILARITY}', true)) IS NOT NULL
       AND length(s.word) BETWEEN length(q.w) - 2 AND length(q.w) + 2
       AND public.levenshtein_less_equal(q.w, s.word, 2) <= 2 AND search_typos(q.w, s.word) < 3
     GROUP BY q.w`,
    [looked],
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
  /** Per target, whether its exact word hits were too many to rank (cappedTargets). */
  capped?: boolean[];
}

/** Exact hits score from 0.81 (0.9 × 0.9) up, prefix hits 0.7 (weight 1) or 0.63 (weight 0.9): nothing between. */
const EXACT_FROM = 0.75;
const PREFIX_TIERS = [0.7, 0.63] as const;

/** The statement's parameters and the SQL every phase shares: its position after the cursor and how a page's rows are described. */
class Statement {
  readonly params: unknown[];
  readonly objects: string[];
  readonly top: string;

  constructor(
    readonly targets: readonly SearchTarget[],
    input: Params,
    readonly after: SearchPosition | undefined,
    limit: number,
  ) {
    /** $1 q, $2 its digits, $3 folded, $4 the candidates' tsquery, $5 the prefix tsquery, $6 the words, $7 their LIKE patterns. */
    this.params = [input.q, input.digits, input.folded, input.candidates, input.prefix, input.words.join(' '), input.patterns];
    this.objects = targets.map((target) => this.param(target.object));
    this.top = this.param(limit);
  }

  param(value: unknown): string {
    return `$${this.params.push(value)}`;
  }

  /** Rows of `x` (object, id, score) after the cursor. */
  position(): string {
    if (!this.after) return 'true';
    const [score, object, id] = this.after;
    return `(x.score < ${this.param(String(score))}::numeric OR (x.score = $${this.params.length}::numeric AND (x.object COLLATE "C", x.id COLLATE "C") > (${this.param(object)}, ${this.param(id)})))`;
  }

  /** Each hit of `top` (object, id, score) described (title, subtitle, matched), best first. */
  sql(top: string): [string, unknown[]] {
    const described = this.targets.map((target, i) => {
      const fields = target.fields.map((f) => `${this.param(f.name)}::text, jsonb_build_array(${weighed(f, rankSql(f))}, ${f.value})`);
      return `SELECT ${target.title} AS title, ${target.subtitle} AS subtitle,
        CASE WHEN t.id = $1::text THEN jsonb_build_object('id', jsonb_build_array(1, t.id)) ELSE jsonb_build_object(${fields.join(', ')}) END AS fields
      FROM ${target.table} t WHERE top.object = ${this.objects[i]}::text AND t.id = top.id`;
    });
    const sql = `
    -- Names every parameter's type, for the targets that never read some of them.
    WITH typed AS (SELECT $1::text, $2::text, $3::text, $4::tsquery, $5::tsquery, $6::text, $7::text[]),
    top AS (${top})
    SELECT top.*, d.* FROM top CROSS JOIN LATERAL (${described.join('\nUNION ALL\n')}) d
    ORDER BY top.score DESC, top.object COLLATE "C", top.id COLLATE "C"`;
    return [sql, this.params];
  }
}

const weighed = (field: SearchField, rank: string) => `${field.weight === 1 ? '' : `${field.weight} * `}${rank}`;

/** Each field folded into its words once per row of `row` (OFFSET 0 keeps the planner from repeating the expression per use). */
const foldedWords = (fields: SearchField[], value: (f: SearchField, j: number) => string) =>
  `CROSS JOIN LATERAL (SELECT ${fields.map((f, j) => `search_text_words(${value(f, j)}) AS w${j}`).join(', ')} OFFSET 0) w`;

const bestOf = (ranks: string[]) => (ranks.length > 1 ? `greatest(${ranks.join(', ')})` : ranks[0]);

/**
 * Exact and prefix hits, in tiers read in the page's order so that PostgreSQL stops as soon as the page is
 * full: first every exact hit (score 0.81 and up: each of q's words is a whole word of the row, or the id, a
 * phone, email or domain key matches), ranked together; then, per score a prefix hit can have (0.7, 0.63) and
 * per object in `object` order, the rows holding every word of q as a word start, read in id order and ranked
 * one by one until the page is full. A word start shared by thousands of rows thus costs the page's rows,
 * not all of them. The branches are a UNION ALL under a LIMIT with no ORDER BY: PostgreSQL's Append reads
 * its branches in the order written (parallel plans are off for the transaction, see searchSlice).
 */
function exactStatement(targets: readonly SearchTarget[], input: Params, after: SearchPosition | undefined, limit: number): [string, unknown[]] {
  const s = new Statement(targets, input, after, limit);
  const branches: string[] = [];
  if (!after || after[0] >= EXACT_FROM) {
    const position = s.position();
    const exact = targets.map((target, i) => {
      const best = bestOf(target.fields.map((f, j) => weighed(f, exactRankSql(f, `w.w${j}`))));
      const where = [`(${exactCandidates(target, !input.capped?.[i]).join(' OR ')})`, ...(target.where ? [target.where] : [])].join(' AND ');
      // OFFSET 0 again: the score is computed once per row, not once for the filter and again for the sort.
      return `(SELECT x.* FROM (SELECT ${s.objects[i]}::text AS object, t.id, CASE WHEN t.id = $1::text THEN 1 ELSE round(${best}, 4) END AS score
          FROM ${target.table} t ${foldedWords(target.fields, (f) => f.value)} WHERE ${where} OFFSET 0) x
        WHERE x.score >= ${EXACT_FROM} AND ${position} ORDER BY x.score DESC, x.id COLLATE "C" LIMIT ${s.top})`;
    });
    branches.push(`(SELECT * FROM (${exact.join('\nUNION ALL\n')}) e ORDER BY e.score DESC, e.object COLLATE "C", e.id COLLATE "C" LIMIT ${s.top})`);
  }
  if (input.prefix) {
    const byObject = targets
      .map((target, i) => ({ target, object: s.objects[i], capped: !!input.capped?.[i] }))
      .sort((a, b) => (a.target.object < b.target.object ? -1 : 1));
    const tierOf = (f: SearchField) => Math.round(f.weight * 0.7 * 1e4) / 1e4;
    for (const tier of PREFIX_TIERS) {
      if (after && after[0] < tier) continue;
      for (const { target, object, capped } of byObject) {
        if (!target.fields.some((f) => f.rule !== 'phone' && tierOf(f) === tier)) continue;
        // A capped target's exact word hits were not ranked: its first tier lists them too, at the tier's
        // score, so paging still reaches every row once; the rows the keys found stay in the exact tier.
        const above = capped && !target.fields.some((f) => f.rule !== 'phone' && tierOf(f) > tier);
        const keys = keyConditions(target, (_, j) => `r.v${j}`);
        let from = '';
        if (after && after[0] === tier) {
          if (target.object < after[1]) continue;
          if (target.object === after[1]) from = ` AND t.id COLLATE "C" > ${s.param(after[2])}`;
        }
        const values = target.fields.map((f, j) => `${f.value} AS v${j}`).join(', ');
        const best = bestOf(target.fields.map((f, j) => weighed(f, exactRankSql({ ...f, value: `r.v${j}` }, `w.w${j}`))));
        // The id is an exact hit (score 1), listed in the first tier.
        const rank = above ? `round(${best}, 4) >= ${tier}` : `round(${best}, 4) = ${tier}`;
        const unkeyed = above && keys.length ? ` AND NOT coalesce(${keys.join(' OR ')}, false)` : '';
        branches.push(`(SELECT ${object}::text AS object, r.id, ${tier} AS score FROM
          (SELECT t.id, ${values} FROM ${target.table} t WHERE search_tsv(${target.words}) @@ $5::tsquery AND t.id <> $1::text${target.where ? ` AND ${target.where}` : ''}${from}
            ORDER BY t.id COLLATE "C" OFFSET 0) r
          ${foldedWords(target.fields, (_, j) => `r.v${j}`)}
        WHERE ${rank}${unkeyed} LIMIT ${s.top})`);
      }
    }
  }
  return s.sql(`SELECT * FROM (${branches.join('\nUNION ALL\n')}) u LIMIT ${s.top}`);
}

/** Typo hits (every rule, plpgsql) among the rows the typo tsquery ($4) finds, after the cursor. */
function typoStatement(targets: readonly SearchTarget[], input: Params, after: SearchPosition | undefined, limit: number): [string, unknown[]] {
  const s = new Statement(targets, input, after, limit);
  const position = s.position();
  const ranked = targets.map((target, i) => {
    const best = bestOf(target.fields.map((f) => weighed(f, rankSql(f))));
    const where = [`search_tsv(${target.words}) @@ $4::tsquery`, ...(target.where ? [target.where] : [])].join(' AND ');
    return `(SELECT x.* FROM (SELECT ${s.objects[i]}::text AS object, t.id, CASE WHEN t.id = $1::text THEN 1 ELSE round(${best}, 4) END AS score
        FROM ${target.table} t WHERE ${where} OFFSET 0) x
      WHERE x.score > 0 AND x.score < ${FUZZY_BELOW} AND ${position} ORDER BY x.score DESC, x.id COLLATE "C" LIMIT ${s.top})`;
  });
  return s.sql(`SELECT * FROM (${ranked.join('\nUNION ALL\n')}) u ORDER BY u.score DESC, u.object COLLATE "C", u.id COLLATE "C" LIMIT ${s.top}`);
}

/** The index-served conditions that make a row a candidate for an exact hit; `byWords` unless its words are too common (cappedTargets). */
function exactCandidates(target: SearchTarget, byWords: boolean): string[] {
  return [`t.id = $1::text`, ...(byWords ? [`search_tsv(${target.words}) @@ $4::tsquery`] : []), ...keyConditions(target, (f) => f.value)];
}

/** A row's phone, email or domain equals q's by its key (`value` is the field's SQL). */
function keyConditions(target: SearchTarget, value: (f: SearchField, j: number) => string): string[] {
  return target.fields.flatMap((f, j) => {
    if (f.rule === 'phone') return [`($2::text <> '' AND search_phone_key(${value(f, j)}) = right($2::text, 7))`];
    if (f.rule === 'email' && f.keyed) return [`search_email_key(${value(f, j)}) = search_email_key($1::text)`];
    if (f.rule === 'domain' && f.keyed) return [`search_domain_key(${value(f, j)}) = search_domain_key($1::text)`];
    return [];
  });
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

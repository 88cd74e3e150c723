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
}

/** One object as search reads it from its table. */
export interface SearchTarget {
  object: string;
  table: string;
  title: string;
  subtitle: string;
  fields: SearchField[];
  /** An extra condition on the rows (a custom object's type). */
  where?: string;
  /** Index-served conditions that find the candidate rows, instead of one per field. */
  candidates?: string[];
}

/** Candidates come from the trigram indexes: a query's words must be this word-similar to some part of a field. */
export const WORD_SIMILARITY_FLOOR = 0.3;

/** What a query is compared as: its folded text (in SQL), its digits when it could be a phone number, and itself as an id. */
export interface SearchInput {
  q: string;
  after?: SearchPosition;
  limit: number;
}

const PHONE_SHAPE = /^[+0-9()./\s-]+$/;

/**
 * One service's hits for a query over its targets, best first: the SQL scores each candidate row by its
 * best field (an exact id scores 1) and pages by (score desc, object, id), so slices of several services
 * merge into one order.
 */
export async function searchSlice(manager: EntityManager, targets: readonly SearchTarget[], input: SearchInput): Promise<SearchHitView[]> {
  if (!targets.length) return [];
  const digits = PHONE_SHAPE.test(input.q) ? input.q.replace(/\D/g, '') : '';
  const params: unknown[] = [input.q, digits.length >= 7 ? digits : ''];
  const param = (value: unknown) => `$${params.push(value)}`;
  const parts = targets.map((target) => targetSql(target, param));
  let after = '';
  if (input.after) {
    const [score, object, id] = input.after;
    after = `WHERE (hits.score < ${param(String(score))}::numeric OR (hits.score = $${params.length}::numeric AND (hits.object COLLATE "C", hits.id COLLATE "C") > (${param(object)}, ${param(id)})))`;
  }
  const sql = `
    SELECT hits.* FROM (${parts.join('\nUNION ALL\n')}) hits
    -- Names the digits' type for objects without a phone field, which never read them.
    CROSS JOIN (SELECT $2::text AS digits) typed ${after}
    ORDER BY hits.score DESC, hits.object COLLATE "C", hits.id COLLATE "C" LIMIT ${param(input.limit)}`;
  await manager.query(`SET LOCAL pg_trgm.word_similarity_threshold = ${WORD_SIMILARITY_FLOOR}`);
  const rows: Array<{ object: string; id: string; title: string | null; subtitle: string | null; score: string; fields: Record<string, [number, string]> }> =
    await manager.query(sql, params);
  return rows.map((row) => ({
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

function rankSql(field: SearchField): string {
  switch (field.rule) {
    case 'email':
      return `search_email_rank(search_fold(${field.value}), search_fold($1::text))`;
    case 'domain':
      return `search_domain_rank(search_fold(${field.value}), search_fold($1::text))`;
    case 'phone':
      return `search_phone_rank(${field.value}, $2::text)`;
    default:
      return `search_rank(search_fold(${field.value}), search_fold($1::text))`;
  }
}

/** The index-served condition that makes a row a candidate for the field. */
function candidateSql(field: SearchField): string {
  if (field.rule === 'phone') return `($2::text <> '' AND search_phone_key(${field.value}) = right($2::text, 7))`;
  return `search_fold(${field.value}) %> search_fold($1::text)`;
}

function targetSql(target: SearchTarget, param: (value: unknown) => string): string {
  const ranks = target.fields.map((f, i) => `${f.weight === 1 ? '' : `${f.weight} * `}${rankSql(f)} AS s${i}`);
  const fields = target.fields.map((f, i) => `${param(f.name)}::text, jsonb_build_array(r.s${i}, ${f.value})`);
  const candidates = target.candidates ?? [...new Set(target.fields.map(candidateSql))];
  return `
    SELECT ${param(target.object)}::text AS object, t.id, ${target.title} AS title, ${target.subtitle} AS subtitle,
      CASE WHEN t.id = $1::text THEN 1 ELSE round(greatest(${target.fields.map((_, i) => `r.s${i}`).join(', ')}), 4) END AS score,
      CASE WHEN t.id = $1::text THEN jsonb_build_object('id', jsonb_build_array(1, t.id)) ELSE jsonb_build_object(${fields.join(', ')}) END AS fields
    FROM ${target.table} t
    CROSS JOIN LATERAL (SELECT ${ranks.join(', ')}) r
    WHERE (t.id = $1::text OR ${candidates.join(' OR ')})${target.where ? ` AND ${target.where}` : ''}
      AND (t.id = $1::text OR greatest(${target.fields.map((_, i) => `r.s${i}`).join(', ')}) > 0)`;
}

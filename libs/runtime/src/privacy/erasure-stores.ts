import type { ErasureStepReply, ErasureStoreCount, ErasureTarget, SequenceRange } from '@crm/contracts';
import type { DataSource, EntityManager } from 'typeorm';
import { ERASURE_LEDGER_DECLARED, ledgered } from './erasure-ledger';
import { blankJson, likePatterns, needlePattern, scrubJson, scrubText } from './redaction';
import type { StreamCopy } from './stream-copy';

/** What one store did. `positions`: the keys it touched, where they are an order (the event log's). */
export interface ErasureStoreResult {
  deleted: number;
  redacted: number;
  positions?: string[];
}

/**
 * One place a service keeps data, and how the person leaves it. Every table of a service's schema is
 * either covered by a store's `tables` or named in its declaration's `noPersonalData` with the reason, and
 * a test holds each service to that (a new table that declares nothing fails it). Each `erase` is
 * idempotent: run again, it finds nothing more to do.
 */
export interface ErasureStore {
  name: string;
  tables: readonly string[];
  erase(m: EntityManager, target: ErasureTarget): Promise<ErasureStoreResult>;
}

export interface ErasureDeclaration {
  service: string;
  stores: readonly ErasureStore[];
  /** Tables that hold no personal data, each with why. */
  noPersonalData: Readonly<Record<string, string>>;
  /** The service's copy of the event stream, which an erasure lets catch up before redacting it. */
  streamCopy?: StreamCopy;
}

/** Every table a declaration accounts for, and the erasure ledger every service keeps (ERASURE_LEDGER_DECLARED). */
export function declaredTables(declaration: ErasureDeclaration): Set<string> {
  return new Set([...declaration.stores.flatMap((s) => s.tables), ...Object.keys(declaration.noPersonalData), ...Object.keys(ERASURE_LEDGER_DECLARED)]);
}

type Column = 'text' | 'jsonb' | 'json-text';

export interface RedactRowsSpec {
  table: string;
  /** A unique column, text or bigint, walked in order. */
  key: string;
  keyType?: 'text' | 'bigint' | 'tid';
  columns: Readonly<Record<string, Column>>;
  /** SQL over the row (alias `r`) true for a row about the contact, `$2` being its id; such rows are blanked. */
  owned?: string;
  /** SQL true for a row already blanked (skipped, so a second run finds nothing). */
  done?: string;
}

const BATCH = 1000;

/** How many rows an UPDATE or DELETE (without RETURNING) changed: as a CTE, so the driver answers rows. */
export async function rowsChanged(m: Pick<EntityManager, 'query'>, sql: string, params: unknown[]): Promise<number> {
  const [{ n }]: Array<{ n: number }> = await m.query(`WITH changed AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM changed`, params);
  return n;
}

/** Ranges of consecutive positions: `[1,2,3,7]` -> `1-3, 7-7`. */
export function toRanges(positions: readonly (string | number)[]): SequenceRange[] {
  const sorted = [...new Set(positions.map((p) => BigInt(p)))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const ranges: SequenceRange[] = [];
  for (const p of sorted) {
    const last = ranges[ranges.length - 1];
    if (last && BigInt(last.to) + 1n === p) last.to = p.toString();
    else ranges.push({ from: p.toString(), to: p.toString() });
  }
  return ranges;
}

function transform(value: unknown, kind: Column, owned: boolean, pattern: RegExp | undefined): unknown {
  if (value === null || value === undefined) return value;
  if (kind === 'text') return owned ? null : scrubText(String(value), pattern);
  if (kind === 'jsonb') return owned ? blankJson(value) : scrubJson(value, pattern);
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    return owned ? JSON.stringify({ redacted: true }) : scrubText(String(value), pattern);
  }
  if (owned && parsed && typeof parsed === 'object' && 'data' in parsed) {
    // An event envelope: its id, type and times stay, its data is blanked.
    return JSON.stringify({ ...(parsed as object), data: blankJson((parsed as { data: unknown }).data), redacted: true });
  }
  return JSON.stringify(owned ? blankJson(parsed) : scrubJson(parsed, pattern));
}

/**
 * Redacts in place every row of `spec.table` whose text holds one of the person's values, or that is about
 * the contact (`owned`): keys, order and row count stay. Walks the table in key order, a batch at a time.
 */
export async function redactRows(m: EntityManager, spec: RedactRowsSpec, target: ErasureTarget): Promise<ErasureStoreResult> {
  const patterns = likePatterns(target.needles);
  const pattern = needlePattern(target.needles);
  const owned = spec.owned && target.contact_id ? `(${spec.owned})${spec.done ? ` AND NOT (${spec.done})` : ''}` : 'false';
  const keyType = spec.keyType ?? 'text';
  const cols = Object.keys(spec.columns);
  let after: string | null = null;
  const positions: string[] = [];
  for (;;) {
    const rows: Array<Record<string, unknown> & { k: string; owned: boolean }> = await m.query(
      `SELECT r.${spec.key}::text AS k, ${cols.map((c) => `r."${c}"`).join(', ')}, (${owned}) AS owned, $2::text AS erased_contact_id
       FROM ${spec.table} r
       WHERE ((cardinality($1::text[]) > 0 AND r::text ILIKE ANY($1::text[])) OR (${owned}))
         AND ($3::${keyType} IS NULL OR r.${spec.key} > $3::${keyType})
       ORDER BY r.${spec.key} LIMIT ${BATCH}`,
      [patterns, target.contact_id, after],
    );
    if (!rows.length) break;
    const keys = rows.map((r) => r.k);
    const values = cols.map((c) => rows.map((r) => transform(r[c], spec.columns[c], r.owned, pattern)));
    const casts = cols.map((c) => (spec.columns[c] === 'jsonb' ? 'jsonb' : 'text'));
    await m.query(
      `UPDATE ${spec.table} r SET ${cols.map((c, i) => `"${c}" = v.c${i}`).join(', ')}
       FROM unnest($1::${keyType}[], ${cols.map((_, i) => `$${i + 2}::${casts[i]}[]`).join(', ')}) AS v(k, ${cols.map((_, i) => `c${i}`).join(', ')})
       WHERE r.${spec.key} = v.k`,
      [keys, ...values.map((vs, i) => vs.map((v) => (v === null || v === undefined ? null : casts[i] === 'jsonb' ? JSON.stringify(v) : v)))],
    );
    positions.push(...keys);
    after = keys[keys.length - 1];
    if (rows.length < BATCH) break;
  }
  return { deleted: 0, redacted: positions.length, positions };
}

/** A store that redacts one table in place. */
export function redactingStore(name: string, spec: RedactRowsSpec): ErasureStore {
  return { name, tables: [spec.table], erase: (m, target) => redactRows(m, spec, target) };
}

/**
 * Removes the person's words from the search dictionary (`search_words`) when no record of the service
 * still holds them: each table with a word index is asked through that index's own expression.
 */
export async function forgetSearchWords(m: EntityManager, target: ErasureTarget): Promise<ErasureStoreResult> {
  const words: Array<{ w: string }> = await m.query(
    `SELECT DISTINCT w FROM unnest($1::text[]) t, unnest(string_to_array(search_text_words(t), ' ')) w
     WHERE length(w) >= 2 AND w !~ '[0-9]'`,
    [target.needles],
  );
  if (!words.length) return { deleted: 0, redacted: 0 };
  const indexes: Array<{ tablename: string; indexdef: string }> = await m.query(
    `SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE '%\\_search\\_words' AND indexdef LIKE '%search_tsv(%'`,
  );
  const exprs = indexes.map((i) => ({ table: i.tablename, expr: /USING gin \((.*)\)$/.exec(i.indexdef)?.[1] })).filter((i) => i.expr);
  let deleted = 0;
  for (const { w } of words) {
    let used = false;
    for (const { table, expr } of exprs) {
      const [hit]: unknown[] = await m.query(`SELECT 1 FROM ${table} WHERE ${expr} @@ to_tsquery('simple', quote_literal($1)) LIMIT 1`, [w]);
      if (hit) {
        used = true;
        break;
      }
    }
    if (used) continue;
    deleted += await rowsChanged(m, `DELETE FROM search_words WHERE word = $1`, [w]);
  }
  return { deleted, redacted: 0 };
}

export const searchWordsStore: ErasureStore = { name: 'search_words', tables: ['search_words'], erase: forgetSearchWords };

/** The stores every service with an outbox, request outcomes and dead events shares. */
export const COMMON_ERASURE_STORES: readonly ErasureStore[] = [
  redactingStore('outbox', { table: 'outbox', key: 'seq', keyType: 'bigint', columns: { payload: 'jsonb' } }),
  redactingStore('request_outcomes', { table: 'request_outcomes', key: 'ref', columns: { reply: 'jsonb' } }),
  redactingStore('dead_events', {
    table: 'dead_events',
    key: 'id',
    keyType: 'bigint',
    columns: { event: 'jsonb', error: 'text' },
    owned: `r.event_type LIKE 'contact.%' AND r.event->'data'->>'contact_id' = $2`,
    done: `coalesce((r.event->>'redacted')::boolean, false)`,
  }),
];

/** Runs a service's stores, each in its own transaction, and reports what each did. */
export async function runErasureStores(
  dataSource: DataSource,
  declaration: ErasureDeclaration,
  target: ErasureTarget,
): Promise<ErasureStepReply & { positions: Record<string, string[]> }> {
  const stores: ErasureStoreCount[] = [];
  const positions: Record<string, string[]> = {};
  for (const store of declaration.stores) {
    const result = await ledgered(dataSource, target.erasure_id, store.name, (m) => store.erase(m, target));
    stores.push({ store: `${declaration.service}.${store.name}`, deleted: result.deleted, redacted: result.redacted });
    if (result.positions) positions[store.name] = result.positions;
  }
  return { stores, positions };
}

/** The tables of a schema snapshot (`column <table>.<name> …` lines) that a declaration accounts for none of. */
export function undeclaredTables(declaration: ErasureDeclaration, snapshot: string): string[] {
  const tables = new Set([...snapshot.matchAll(/^column ([a-z0-9_]+)\./gm)].map((m) => m[1]));
  const declared = declaredTables(declaration);
  return [...tables].filter((t) => !declared.has(t)).sort();
}

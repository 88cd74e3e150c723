import { parsePhoneNumber } from 'libphonenumber-js';
import type { ApiCall, LoadedIds } from './duplicates-labels';
import { LabelledSet, random, typo } from './duplicates-set';

/**
 * Queries a person would type into GET /search, made from a loaded labelled set (bench/duplicates-set.ts),
 * each with the entity whose records it should find first: a first name with a misspelt surname, an
 * email's local part, a phone written in another format, a company's name without its legal form.
 */
export interface LabelledQuery {
  kind: 'misspelt_surname' | 'email_prefix' | 'phone_other_format' | 'company_without_suffix';
  q: string;
  objects: 'contacts' | 'companies';
  /** The ids of the records of the entity expected first. */
  expected: string[];
}

const LEGAL_FORM = / *,? +(Inc\.?|Incorporated|Ltd\.?|Limited|LLC|L\.L\.C\.|GmbH|G\.m\.b\.H\.|Corp\.?|Corporation|S\.A\.|SA|B\.V\.|BV)$/;

export function labelledQueries(set: LabelledSet, ids: LoadedIds, perKind = 50, seed = 65): LabelledQuery[] {
  const rnd = random(seed);
  const recordsOf = (records: Array<{ key: string; entity: string }>, entity: string) => records.filter((r) => r.entity === entity).map((r) => ids.get(r.key)!);
  const originals = set.contacts.filter((c) => c.kind === 'original');
  const locals = new Map<string, number>();
  for (const c of set.contacts) locals.set(c.email.split('@')[0].toLowerCase(), (locals.get(c.email.split('@')[0].toLowerCase()) ?? 0) + 1);
  const queries: LabelledQuery[] = [];
  const take = <T>(list: T[], make: (item: T) => LabelledQuery | null) => {
    let n = 0;
    for (const item of list) {
      if (n >= perKind) break;
      const q = make(item);
      if (q) {
        queries.push(q);
        n++;
      }
    }
  };
  take(originals, (c) => {
    if (c.last_name.length < 6) return null;
    return {
      kind: 'misspelt_surname',
      q: `${c.first_name} ${typo(rnd, c.last_name, 1).text}`,
      objects: 'contacts',
      expected: recordsOf(set.contacts, c.entity),
    };
  });
  take(originals, (c) => {
    const local = c.email.split('@')[0];
    // A local part of one contact alone, long enough to be typed as a name.
    if (local.length < 6 || locals.get(local.toLowerCase())! > 1) return null;
    return { kind: 'email_prefix', q: local, objects: 'contacts', expected: recordsOf(set.contacts, c.entity) };
  });
  take(
    // A number written with its country code, asked for as it is written at home.
    originals.filter((c) => c.phone?.startsWith('+')),
    (c) => ({ kind: 'phone_other_format', q: parsePhoneNumber(c.phone!).formatNational(), objects: 'contacts', expected: recordsOf(set.contacts, c.entity) }),
  );
  take(
    set.companies.filter((c) => c.kind === 'original' && LEGAL_FORM.test(c.name)),
    (c) => ({ kind: 'company_without_suffix', q: c.name.replace(LEGAL_FORM, ''), objects: 'companies', expected: recordsOf(set.companies, c.entity) }),
  );
  return queries;
}

export interface SearchQuality {
  kind: string;
  queries: number;
  first: number;
  topFive: number;
}

/** Asks GET /search for each query (its object only) and counts those whose first hit, and any of the first five, is expected. */
export async function askSearch(call: ApiCall, queries: LabelledQuery[]): Promise<SearchQuality[]> {
  const rows = new Map<string, SearchQuality>();
  for (const query of queries) {
    const res = await call('GET', `/search?q=${encodeURIComponent(query.q)}&objects=${query.objects}&limit=5`);
    if (res.status !== 200) throw new Error(`GET /search?q=${query.q}: ${res.status} ${JSON.stringify(res.body)}`);
    const hits = (res.body.data as Array<{ id: string }>).map((h) => h.id);
    const row = rows.get(query.kind) ?? { kind: query.kind, queries: 0, first: 0, topFive: 0 };
    row.queries++;
    if (query.expected.includes(hits[0])) row.first++;
    if (hits.some((h) => query.expected.includes(h))) row.topFive++;
    rows.set(query.kind, row);
  }
  return [...rows.values()];
}

export function searchTable(rows: SearchQuality[], label = ''): string {
  const lines = [`| ${label ? 'build | ' : ''}query kind | queries | found first | in first five |`, `|${label ? '---|' : ''}---|---:|---:|---:|`];
  for (const r of rows) {
    lines.push(`| ${label ? `${label} | ` : ''}${r.kind} | ${r.queries} | ${(r.first / r.queries).toFixed(3)} | ${(r.topFive / r.queries).toFixed(3)} |`);
  }
  return lines.join('\n');
}

import { performance } from 'perf_hooks';
import type { LabelledSet } from './duplicates-set';

/**
 * Loading a labelled duplicates set (bench/duplicates-set.ts) through the API, asking the duplicate route
 * for every record, and measuring the answers against the labels: used by `npm run bench:duplicates` and
 * by the CI guard (test/api/duplicates-quality.spec.ts).
 */

/** One API request: status and parsed body. */
export type ApiCall = (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** Each labelled record's key → the id the API gave it. */
export type LoadedIds = Map<string, string>;

const BATCH = 200;

async function createAll(call: ApiCall, object: 'companies' | 'contacts', items: Array<{ key: string; body: object }>, ids: LoadedIds): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) {
    const slice = items.slice(i, i + BATCH);
    const res = await call('POST', `/${object}/batch`, { operation: 'create', items: slice.map((s) => s.body) });
    if (res.status !== 200) throw new Error(`POST /${object}/batch: ${res.status} ${JSON.stringify(res.body)}`);
    for (const r of res.body.data as Array<{ index: number; status: number; data?: { id: string }; error?: unknown }>) {
      if (r.status !== 201 || !r.data) throw new Error(`${object} ${JSON.stringify(slice[r.index].body)}: ${r.status} ${JSON.stringify(r.error)}`);
      ids.set(slice[r.index].key, r.data.id);
    }
  }
}

/** Creates every company, then every contact (with its company's id), in batches. */
export async function loadLabelledSet(call: ApiCall, set: LabelledSet): Promise<LoadedIds> {
  const ids: LoadedIds = new Map();
  await createAll(
    call,
    'companies',
    set.companies.map((c) => ({ key: c.key, body: { name: c.name, ...(c.domain ? { domain: c.domain } : {}) } })),
    ids,
  );
  await createAll(
    call,
    'contacts',
    set.contacts.map((c) => ({
      key: c.key,
      body: {
        email: c.email,
        first_name: c.first_name,
        last_name: c.last_name,
        ...(c.phone ? { phone: c.phone } : {}),
        ...(c.company ? { company_id: ids.get(c.company) } : {}),
      },
    })),
    ids,
  );
  return ids;
}

export interface Answer {
  object: 'contacts' | 'companies';
  key: string;
  found: string[];
  /** Each reason the answer gave, as `field rule`. */
  reasons: string[];
  ms: number;
}

/**
 * GET /<object>/:id/duplicates for every record, at the default min_score: one request at a time (the
 * bench's latencies), or `concurrency` at once when only the answers matter.
 */
export async function askEveryRecord(call: ApiCall, set: LabelledSet, ids: LoadedIds, concurrency = 1): Promise<Answer[]> {
  const asks = [
    ...set.contacts.map((r) => ({ object: 'contacts' as const, key: r.key })),
    ...set.companies.map((r) => ({ object: 'companies' as const, key: r.key })),
  ];
  const answers: Answer[] = [];
  let next = 0;
  const worker = async () => {
    while (next < asks.length) {
      const { object, key } = asks[next++];
      const started = performance.now();
      const res = await call('GET', `/${object}/${ids.get(key)}/duplicates?limit=100`);
      const ms = performance.now() - started;
      if (res.status !== 200) throw new Error(`GET /${object}/${ids.get(key)}/duplicates: ${res.status} ${JSON.stringify(res.body)}`);
      const data = res.body.data as Array<{ id: string; reasons: Array<{ field: string; rule: string }> }>;
      const reasons = [...new Set(data.flatMap((d) => d.reasons.map((r) => `${r.field} ${r.rule}`)))];
      answers.push({ object, key, found: data.map((d) => d.id), reasons, ms });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return answers;
}

export interface KindResult {
  object: 'contacts' | 'companies';
  kind: string;
  /** Pairs of the same entity this kind made, counted from both records' side. */
  expected: number;
  /** Of those, the pairs answered. */
  found: number;
  /** Pairs answered from or to a record of this kind (or, for an original, its partner's kind). */
  answered: number;
  /** Of those, the pairs of one entity. */
  correct: number;
}

export interface Quality {
  kinds: KindResult[];
  precision: number;
  recall: number;
  /** Per object. */
  objects: Record<'contacts' | 'companies', { precision: number; recall: number; p50: number; p99: number }>;
  p50: number;
  p99: number;
}

export const percentileOf = (values: number[], p: number) => {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

const ratio = (a: number, b: number) => (b ? a / b : 1);

/**
 * Precision and recall of pairs: a pair is one record's answer naming another. A pair's kind is the kind
 * of the record that is not an original (the duplicate, or the hard negative), so an original's answers
 * count towards its partner's kind.
 */
export function measure(set: LabelledSet, ids: LoadedIds, answers: Answer[]): Quality {
  const records = new Map<string, { object: 'contacts' | 'companies'; entity: string; kind: string; key: string }>();
  for (const c of set.contacts) records.set(ids.get(c.key)!, { object: 'contacts', entity: c.entity, kind: c.kind, key: c.key });
  for (const c of set.companies) records.set(ids.get(c.key)!, { object: 'companies', entity: c.entity, kind: c.kind, key: c.key });
  const byEntity = new Map<string, string[]>();
  for (const [id, r] of records) byEntity.set(`${r.object}:${r.entity}`, [...(byEntity.get(`${r.object}:${r.entity}`) ?? []), id]);
  const rows = new Map<string, KindResult>();
  const row = (object: 'contacts' | 'companies', kind: string) => {
    const k = `${object}:${kind}`;
    if (!rows.has(k)) rows.set(k, { object, kind, expected: 0, found: 0, answered: 0, correct: 0 });
    return rows.get(k)!;
  };
  const pairKind = (a: { kind: string }, b: { kind: string }) => (a.kind !== 'original' ? a.kind : b.kind);
  for (const answer of answers) {
    const id = ids.get(answer.key)!;
    const self = records.get(id)!;
    const truth = (byEntity.get(`${self.object}:${self.entity}`) ?? []).filter((x) => x !== id);
    for (const t of truth) {
      const r = row(self.object, pairKind(self, records.get(t)!));
      r.expected++;
      if (answer.found.includes(t)) r.found++;
    }
    for (const f of answer.found) {
      const other = records.get(f);
      // A record outside the set (none in a fresh stack) counts as wrong.
      const r = row(self.object, other ? pairKind(self, other) : self.kind);
      r.answered++;
      if (other && other.entity === self.entity) r.correct++;
    }
  }
  const kinds = [...rows.values()].sort((a, b) => a.object.localeCompare(b.object) || a.kind.localeCompare(b.kind));
  const sum = (list: KindResult[], f: keyof KindResult) => list.reduce((s, k) => s + (k[f] as number), 0);
  const objectQuality = (object: 'contacts' | 'companies') => {
    const list = kinds.filter((k) => k.object === object);
    const ms = answers.filter((a) => a.object === object).map((a) => a.ms);
    return {
      precision: ratio(sum(list, 'correct'), sum(list, 'answered')),
      recall: ratio(sum(list, 'found'), sum(list, 'expected')),
      p50: percentileOf(ms, 50),
      p99: percentileOf(ms, 99),
    };
  };
  const all = answers.map((a) => a.ms);
  return {
    kinds,
    precision: ratio(sum(kinds, 'correct'), sum(kinds, 'answered')),
    recall: ratio(sum(kinds, 'found'), sum(kinds, 'expected')),
    objects: { contacts: objectQuality('contacts'), companies: objectQuality('companies') },
    p50: percentileOf(all, 50),
    p99: percentileOf(all, 99),
  };
}

export const recallOf = (k: KindResult) => ratio(k.found, k.expected);
export const precisionOf = (k: KindResult) => ratio(k.correct, k.answered);

/** A markdown table of the results, one row per object and kind, and the overall figures. */
export function qualityTable(q: Quality, label = ''): string {
  const f = (n: number) => n.toFixed(3);
  const lines = [
    `| ${label ? 'rules | ' : ''}object | kind | pairs | found | recall | answered | correct | precision |`,
    `|${label ? '---|' : ''}---|---|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const k of q.kinds) {
    lines.push(
      `| ${label ? `${label} | ` : ''}${k.object} | ${k.kind} | ${k.expected} | ${k.found} | ${k.expected ? f(recallOf(k)) : '–'} | ${k.answered} | ${k.correct} | ${k.answered ? f(precisionOf(k)) : '–'} |`,
    );
  }
  for (const object of ['contacts', 'companies'] as const) {
    const o = q.objects[object];
    lines.push(`| ${label ? `${label} | ` : ''}${object} | **all** | | | ${f(o.recall)} | | | ${f(o.precision)} |`);
  }
  lines.push(`| ${label ? `${label} | ` : ''}both | **all** | | | ${f(q.recall)} | | | ${f(q.precision)} |`);
  const ms = (n: number) => n.toFixed(1);
  lines.push(
    '',
    `Latency ${label ? `(${label}) ` : ''}ms: contacts p50 ${ms(q.objects.contacts.p50)} p99 ${ms(q.objects.contacts.p99)}, companies p50 ${ms(q.objects.companies.p50)} p99 ${ms(q.objects.companies.p99)}, all p50 ${ms(q.p50)} p99 ${ms(q.p99)}`,
  );
  return lines.join('\n');
}

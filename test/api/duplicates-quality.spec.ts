import { readFileSync } from 'fs';
import { join } from 'path';
// The guard measures exactly as `npm run bench:duplicates` does: the labelled set and its measurement are the benchmark's.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { Answer, askEveryRecord, loadLabelledSet, measure, precisionOf, Quality, qualityTable, recallOf } from '../../bench/duplicates-labels';
// eslint-disable-next-line @nx/enforce-module-boundaries
import type { LabelledSet } from '../../bench/duplicates-set';
import { startStack, TestStack } from '../support/stack';

/**
 * The duplicate rules' quality on the committed labelled set (bench/data/duplicates-small.json, made by
 * bench/duplicates-set.ts with seed 65 and 100 companies): the figures docs/search.md promises, checked on
 * every run. Every record is looked up once, at the default min_score.
 */
const SET: LabelledSet = JSON.parse(readFileSync(join(__dirname, '..', '..', 'bench', 'data', 'duplicates-small.json'), 'utf8'));

/** Kinds whose recall must reach 0.95: one- and two-typo names sharing a company or its domain, every email and phone variant. */
const RECALL_KINDS = ['name_typo_1', 'name_typo_2', 'email_plus_tag', 'email_dots', 'email_case_tag', 'phone_format'];
/** And for companies: one or two typos in the name, another legal form, the domain with www. or in capitals. */
const COMPANY_RECALL_KINDS = ['company_typo_1', 'company_typo_2', 'company_suffix', 'domain_www_scheme'];
const TARGET = 0.95;

describe('duplicate rules on the labelled set', () => {
  let stack: TestStack;
  let quality: Quality;
  let answers: Answer[];
  beforeAll(async () => {
    // About 1,600 requests as fast as the machine answers: the key's rate limit is not what this file measures.
    stack = await startStack({ services: ['contacts'], env: { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_BURST: '100000' } });
    const call = (method: 'GET' | 'POST', path: string, body?: unknown) => stack.api.request(method, path, body);
    const ids = await loadLabelledSet(call, SET);
    // Four look-ups in flight: only the answers are measured here, not their time.
    answers = await askEveryRecord(call, SET, ids, 4);
    quality = measure(SET, ids, answers);
    // A deadline for a hang: about 1,600 requests, minutes on a machine at a load of 30.
  }, 600_000);
  afterAll(() => stack?.stop());

  it(`finds at least ${TARGET} of the typo, email and phone duplicates`, () => {
    const recalls = Object.fromEntries(
      quality.kinds.filter((k) => k.object === 'contacts' && RECALL_KINDS.includes(k.kind)).map((k) => [k.kind, Math.round(recallOf(k) * 1000) / 1000]),
    );
    expect(Object.keys(recalls).sort()).toEqual([...RECALL_KINDS].sort());
    for (const kind of RECALL_KINDS) expect({ kind, recall: recalls[kind] >= TARGET ? 'met' : recalls[kind] }).toEqual({ kind, recall: 'met' });
  });

  it(`finds at least ${TARGET} of the companies' name and domain duplicates`, () => {
    const recalls = Object.fromEntries(
      quality.kinds
        .filter((k) => k.object === 'companies' && COMPANY_RECALL_KINDS.includes(k.kind))
        .map((k) => [k.kind, Math.round(recallOf(k) * 1000) / 1000]),
    );
    expect(Object.keys(recalls).sort()).toEqual([...COMPANY_RECALL_KINDS].sort());
    for (const kind of COMPANY_RECALL_KINDS) expect({ kind, recall: recalls[kind] >= TARGET ? 'met' : recalls[kind] }).toEqual({ kind, recall: 'met' });
  });

  it('names only fields and rules the served OpenAPI document lists, and every rule is used', async () => {
    const res = await fetch(`${stack.api.baseUrl}/openapi.json`);
    const document = (await res.json()) as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> } };
    const reason = document.components.schemas.DuplicateReasonView.properties;
    const given = [...new Set(answers.flatMap((a) => a.reasons))].sort();
    const listed = given.filter((r) => {
      const [field, rule] = r.split(' ');
      return reason.field.enum?.includes(field) && reason.rule.enum?.includes(rule);
    });
    expect(listed).toEqual(given);
    expect([...new Set(given.map((r) => r.split(' ')[1]))].sort()).toEqual([...(reason.rule.enum ?? [])].sort());
  });

  it(`is right at least ${TARGET} of the time, hard negatives included`, () => {
    const wrong = quality.kinds.filter((k) => k.answered > k.correct).map((k) => `${k.object} ${k.kind}: ${k.answered - k.correct} wrong (${precisionOf(k)})`);
    expect({
      precision: quality.precision >= TARGET ? 'met' : quality.precision,
      wrong,
      table: quality.precision >= TARGET ? '' : qualityTable(quality),
    }).toEqual({
      precision: 'met',
      wrong: expect.any(Array),
      table: '',
    });
    for (const object of ['contacts', 'companies'] as const)
      expect({ object, met: quality.objects[object].precision >= TARGET }).toEqual({ object, met: true });
  });
});

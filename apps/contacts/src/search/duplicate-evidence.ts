import { sameNickname } from './duplicate-nicknames';

/**
 * How much each piece of evidence says about two records being one person or one company (docs/search.md,
 * "Duplicates"). Each comparison adds its weight, in natural-log odds, to a prior; the score is the
 * logistic of the sum, a probability. Weights were chosen on the labelled set of bench/duplicates-set.ts
 * (`npm run bench:duplicates`, results in docs/benchmarks.md).
 */
export const CONTACT_EVIDENCE = {
  /** Where every contact pair starts: two records that met no rule are not one person. */
  prior: -3,
  sameEmail: 6,
  /** A phone shared by two records; by more (a switchboard, a family), less. */
  samePhone: { two: 4, few: 2.5, many: 1 },
  /** The same company record, or the same email domain that is not a mailbox provider's. */
  sameCompany: 1.5,
  firstName: { same: 1.5, nickname: 1.5, similar: 1, initial: 0.5, different: -4.5 },
  /** A surname shared by at most 5, 50 or more contacts. */
  lastName: { rare: 2.5, common: 1.5, veryCommon: 0.5, similar: 1.5, different: -3.5 },
} as const;

export const COMPANY_EVIDENCE = {
  prior: -1.5,
  sameDomain: 6,
  differentDomain: -2,
  name: { same: 3, similar: 2, different: -2 },
} as const;

/** Lower case, accents and special letters folded, blanks collapsed: how names are compared. */
export function foldName(text: string | null | undefined): string {
  return (text ?? '')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ł/g, 'l')
    .replace(/ø/g, 'o')
    .replace(/ß/g, 'ss')
    .replace(/ı/g, 'i')
    .replace(/æ/g, 'ae')
    .replace(/œ/g, 'oe')
    .replace(/đ/g, 'd')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Legal forms a company name may end with, as folded words (`G.m.b.H.` folds to `gmbh` once dots are dropped). */
const LEGAL_FORMS = new Set([
  'inc',
  'incorporated',
  'ltd',
  'limited',
  'llc',
  'llp',
  'gmbh',
  'ag',
  'kg',
  'corp',
  'corporation',
  'co',
  'company',
  'plc',
  'sa',
  'sas',
  'sarl',
  'srl',
  'spa',
  'bv',
  'nv',
  'oy',
  'ab',
  'as',
  'pty',
  'kk',
]);

/** A company name without its legal form, folded: `Acme, Inc.` and `ACME Incorporated` are both `acme`. */
export function companyNameKey(name: string | null | undefined): string {
  const words = foldName((name ?? '').replace(/\./g, '')).split(' ');
  while (words.length > 1 && LEGAL_FORMS.has(words[words.length - 1])) words.pop();
  return words.join(' ');
}

/**
 * Damerau-Levenshtein distance: insertions, deletions, substitutions and transpositions of adjacent letters,
 * a transposed pair may also be edited around (`henry` → `heny` → `heyn` is two).
 */
export function editDistance(a: string, b: string): number {
  const big = a.length + b.length;
  const lastRow = new Map<string, number>();
  const d: number[][] = Array.from({ length: a.length + 2 }, () => Array<number>(b.length + 2).fill(0));
  d[0][0] = big;
  for (let i = 0; i <= a.length; i++) [d[i + 1][0], d[i + 1][1]] = [big, i];
  for (let j = 0; j <= b.length; j++) [d[0][j + 1], d[1][j + 1]] = [big, j];
  for (let i = 1; i <= a.length; i++) {
    let lastColumn = 0;
    for (let j = 1; j <= b.length; j++) {
      const k = lastRow.get(b[j - 1]) ?? 0;
      const l = lastColumn;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      if (!cost) lastColumn = j;
      d[i + 1][j + 1] = Math.min(d[i][j] + cost, d[i + 1][j] + 1, d[i][j + 1] + 1, d[k][l] + (i - k - 1) + 1 + (j - l - 1));
    }
    lastRow.set(a[i - 1], i);
  }
  return d[a.length + 1][b.length + 1];
}

/** Jaro-Winkler similarity (prefix scale 0.1, up to four letters): 1 for equal strings, 0 for nothing in common. */
export function jaroWinkler(a: string, b: string): number {
  if (a === b) return 1;
  if (!a.length || !b.length) return 0;
  const window = Math.max(0, Math.floor(Math.max(a.length, b.length) / 2) - 1);
  const aMatched = new Array<boolean>(a.length).fill(false);
  const bMatched = new Array<boolean>(b.length).fill(false);
  let matches = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = Math.max(0, i - window); j < Math.min(b.length, i + window + 1); j++) {
      if (bMatched[j] || a[i] !== b[j]) continue;
      aMatched[i] = bMatched[j] = true;
      matches++;
      break;
    }
  }
  if (!matches) return 0;
  let transpositions = 0;
  for (let i = 0, j = 0; i < a.length; i++) {
    if (!aMatched[i]) continue;
    while (!bMatched[j]) j++;
    if (a[i] !== b[j]) transpositions++;
    j++;
  }
  const jaro = (matches / a.length + matches / b.length + (matches - transpositions / 2) / matches) / 3;
  let prefix = 0;
  while (prefix < 4 && prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  return jaro + prefix * 0.1 * (1 - jaro);
}

/** Typos allowed between two words, by the longer one's letters: none up to two, one up to four, two from five. */
const allowedEdits = (length: number) => (length <= 2 ? 0 : length <= 4 ? 1 : 2);

/**
 * Whether two folded words (or names) are within their typos of each other: one for words of three or four
 * letters, two from five when both start with the same letter (typos rarely touch a name's first letter,
 * and two changes besides it leave too little of a short word).
 */
export function similarWords(a: string, b: string): boolean {
  const allowed = allowedEdits(Math.max(a.length, b.length));
  if (!allowed || Math.abs(a.length - b.length) > allowed) return false;
  const distance = editDistance(a, b);
  return distance <= 1 ? allowed >= 1 : distance <= allowed && a[0] === b[0];
}

export type NameMatch = 'same' | 'nickname' | 'similar' | 'initial' | 'different' | 'missing';

/** Two folded first names. */
export function compareFirstNames(a: string, b: string): NameMatch {
  if (!a || !b) return 'missing';
  if (a === b || a.replace(/ /g, '') === b.replace(/ /g, '')) return 'same';
  if (sameNickname(a, b)) return 'nickname';
  if (similarWords(a, b)) return 'similar';
  if ((a.length === 1 && b.startsWith(a)) || (b.length === 1 && a.startsWith(b))) return 'initial';
  return 'different';
}

/** Two folded surnames. */
export function compareLastNames(a: string, b: string): NameMatch {
  if (!a || !b) return 'missing';
  if (a === b || a.replace(/ /g, '') === b.replace(/ /g, '')) return 'same';
  return similarWords(a.replace(/ /g, ''), b.replace(/ /g, '')) ? 'similar' : 'different';
}

export interface PersonNames {
  first: string;
  last: string;
}

export interface NameComparison {
  first: NameMatch;
  last: NameMatch;
  /** The names were compared crosswise: one record has them the other way round. */
  swapped: boolean;
  /** Jaro-Winkler of the two full names as compared (first and last in the order that matched), 0–1. */
  similarity: number;
}

const matchRank = (m: NameMatch) => ({ same: 5, nickname: 4, similar: 3, initial: 2, missing: 1, different: 0 })[m];

/** Compares two people's names as written and crosswise (first and last swapped), keeping the better. */
export function compareNames(a: PersonNames, b: PersonNames): NameComparison {
  const straight = { first: compareFirstNames(a.first, b.first), last: compareLastNames(a.last, b.last), swapped: false };
  const crossed = { first: compareFirstNames(a.first, b.last), last: compareLastNames(a.last, b.first), swapped: true };
  const rank = (c: typeof straight) => matchRank(c.first) + matchRank(c.last);
  const best = rank(crossed) > rank(straight) && crossed.first !== 'missing' && crossed.last !== 'missing' ? crossed : straight;
  const full = (first: string, last: string) => `${first} ${last}`.trim();
  const similarity = jaroWinkler(full(a.first, a.last), best.swapped ? full(b.last, b.first) : full(b.first, b.last));
  return { ...best, similarity: Math.round(similarity * 100) / 100 };
}

/** The weight of a shared surname held by `count` contacts (the two compared included). */
export function surnameWeight(count: number): number {
  const w = CONTACT_EVIDENCE.lastName;
  return count <= 5 ? w.rare : count <= 50 ? w.common : w.veryCommon;
}

/** The weight of a shared phone held by `count` contacts. */
export function phoneWeight(count: number): number {
  const w = CONTACT_EVIDENCE.samePhone;
  return count <= 2 ? w.two : count <= 5 ? w.few : w.many;
}

/** The weight of a name comparison: each part's agreement or disagreement; a missing part says nothing. */
export function nameWeight(names: NameComparison, surnameCount: number): number {
  const first = CONTACT_EVIDENCE.firstName;
  const last = CONTACT_EVIDENCE.lastName;
  const firstWeight = names.first === 'missing' ? 0 : first[names.first];
  const lastWeight =
    names.last === 'missing' ? 0 : names.last === 'same' ? surnameWeight(surnameCount) : names.last === 'similar' ? last.similar : last.different;
  return firstWeight + lastWeight;
}

/** Log-odds to a probability, rounded to four places. */
export const probability = (logOdds: number) => Math.round((1 / (1 + Math.exp(-logOdds))) * 10_000) / 10_000;

/** Two phones are one number when one's significant digits (no trunk 0) end with the other's, seven at least. */
export function samePhone(a: string | null | undefined, b: string | null | undefined): boolean {
  const digits = (p: string) => p.replace(/\D/g, '').replace(/^0+/, '');
  if (!a || !b) return false;
  const [x, y] = [digits(a), digits(b)];
  if (x.length < 7 || y.length < 7) return false;
  return x.endsWith(y) || y.endsWith(x);
}

/** Two company names: `same` without their legal forms, `similar` when every word is a typo or two apart (or the names are, without blanks). */
export function compareCompanyNames(a: string, b: string): { match: 'same' | 'similar' | 'different' | 'missing'; similarity: number } {
  const [x, y] = [companyNameKey(a), companyNameKey(b)];
  if (!x || !y) return { match: 'missing', similarity: 0 };
  const similarity = Math.round(jaroWinkler(x, y) * 100) / 100;
  if (x === y || x.replace(/ /g, '') === y.replace(/ /g, '')) return { match: 'same', similarity: 1 };
  const [xs, ys] = [x.split(' '), y.split(' ')];
  const wordwise = xs.length === ys.length && xs.every((w, i) => w === ys[i] || similarWords(w, ys[i]));
  return { match: wordwise ? 'similar' : 'different', similarity };
}

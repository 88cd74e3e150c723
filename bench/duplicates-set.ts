import { parsePhoneNumber } from 'libphonenumber-js';
import { writeFileSync } from 'fs';
import { join } from 'path';
import {
  COMMON_SURNAMES,
  DESCRIPTORS,
  FIRST_NAMES,
  KEYBOARD_NEIGHBOURS,
  LEGAL_FORMS,
  PERSONAL_MAIL,
  PHONE_PLANS,
  STEM_SYLLABLES,
  SURNAMES,
} from './duplicates-names';

/**
 * A labelled set for the duplicate rules (docs/search.md, "Duplicates"; docs/benchmarks.md): people and
 * companies, and for some of them a second record made the way duplicates arise, each labelled with the
 * entity it belongs to and the kind of change that made it; and hard negatives, records of another entity
 * made to look alike (the same first name at the same company, a family sharing a phone, the same common
 * surname at a large company, another company with the same stem). One seed always makes the same set.
 *
 * `npm run bench:duplicates-set -- <seed> <companies> <file>` writes one; bench/data/duplicates-small.json is
 * the copy the CI guard loads (seed 65, 100 companies).
 */

/** A change a duplicate record was made with, or `original`, or a hard negative's kind. */
export type RecordKind = string;

export interface LabelledCompany {
  key: string;
  entity: string;
  kind: RecordKind;
  name: string;
  domain: string | null;
}

export interface LabelledContact {
  key: string;
  entity: string;
  kind: RecordKind;
  first_name: string;
  last_name: string;
  email: string;
  phone: string | null;
  /** The key of the company record the contact works at. */
  company: string | null;
}

export interface LabelledSet {
  seed: number;
  companies: LabelledCompany[];
  contacts: LabelledContact[];
}

export const CONTACT_VARIANTS = [
  'name_typo_1',
  'name_typo_2',
  'accents_dropped',
  'nickname',
  'name_swapped',
  'case_spacing',
  'email_plus_tag',
  'email_dots',
  'email_case_tag',
  'phone_format',
] as const;
export const COMPANY_VARIANTS = ['company_typo_1', 'company_typo_2', 'company_suffix', 'domain_www_scheme'] as const;
export const HARD_NEGATIVES = ['same_first_name_company', 'family_shared_phone', 'same_surname_large_company', 'company_same_stem'] as const;

/** A small fast generator (mulberry32): the same seed, the same set, on every machine. */
export function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)];
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Random = ReturnType<typeof random>;

const fold = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ł/g, 'l')
    .replace(/Ł/g, 'L')
    .replace(/ø/g, 'o')
    .replace(/Ø/g, 'O')
    .replace(/ß/g, 'ss')
    .replace(/ı/g, 'i');
const mailWord = (text: string) =>
  fold(text)
    .toLowerCase()
    .replace(/[^a-z]/g, '');
const capital = (text: string) => text[0].toUpperCase() + text.slice(1);

/** One or more typos in a word, never its first letter: transposition, insertion, deletion, a neighbouring key. */
export function typo(rnd: Random, word: string, edits: number): { text: string; ops: string[] } {
  let text = word;
  const ops: string[] = [];
  for (let tries = 0; ops.length < edits && tries < 50; tries++) {
    const letters = [...text];
    const op = rnd.pick(['transposition', 'insertion', 'deletion', 'neighbour']);
    const at = 1 + rnd.int(Math.max(1, letters.length - 1));
    const lower = (letters[at] ?? '').toLowerCase();
    if (op === 'transposition') {
      if (at + 1 >= letters.length || letters[at] === letters[at + 1]) continue;
      [letters[at], letters[at + 1]] = [letters[at + 1], letters[at]];
    } else if (op === 'insertion') {
      const near = KEYBOARD_NEIGHBOURS[lower] ?? 'e';
      letters.splice(at, 0, rnd.chance(0.5) ? (letters[at] ?? 'e') : rnd.pick([...near]));
    } else if (op === 'deletion') {
      if (letters.length < 4 || at >= letters.length) continue;
      letters.splice(at, 1);
    } else {
      const near = KEYBOARD_NEIGHBOURS[lower];
      if (!near) continue;
      letters[at] = rnd.pick([...near]);
    }
    const next = letters.join('');
    if (next.toLowerCase() === text.toLowerCase()) continue;
    text = next;
    ops.push(op);
  }
  return { text, ops };
}

/** Letters to change, insert or delete to turn one word into the other. */
function lettersApart(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}

/** A phone number in E.164 of one of PHONE_PLANS' countries. */
function phoneNumber(rnd: Random): string {
  const plan = rnd.pick(PHONE_PLANS);
  let national = rnd.pick(plan.leads);
  while (national.length < plan.digits) national += String(rnd.int(10));
  return `+${plan.code}${national}`;
}

/** The same number as another person would write it: E.164, international with spaces, or national. */
export function phoneFormat(e164: string, format: 'e164' | 'international' | 'national'): string {
  const parsed = parsePhoneNumber(e164);
  return format === 'e164' ? parsed.number : format === 'international' ? parsed.formatInternational() : parsed.formatNational();
}

/** Another written form of a phone than `written`, of the same number. */
function otherPhoneFormat(rnd: Random, e164: string, written: string, numbers: Map<string, string>): string {
  const forms = (['e164', 'international', 'national'] as const).map((f) => phoneFormat(e164, f)).filter((f) => f !== written);
  const other = rnd.pick(forms);
  numbers.set(other, e164);
  return other;
}

export function generateDuplicatesSet(seed: number, companyCount: number, nicknameGroups: readonly (readonly string[])[]): LabelledSet {
  const rnd = random(seed);
  const companies: LabelledCompany[] = [];
  const contacts: LabelledContact[] = [];
  const emails = new Set<string>();
  const domains = new Set<string>();
  // Each written phone's number: a national form alone does not say its country.
  const numbers = new Map<string, string>();
  let entities = 0;
  const entity = () => `e${++entities}`;
  let keys = 0;
  const key = (prefix: string) => `${prefix}${++keys}`;

  const uniqueEmail = (local: string, domain: string) => {
    let email = `${local}@${domain}`;
    for (let n = 2; emails.has(email.toLowerCase()); n++) email = `${local}${n}@${domain}`;
    emails.add(email.toLowerCase());
    return email;
  };
  // Company stems more than two letters apart from each other: two companies one or two typos apart would
  // be called duplicates by anyone, so the labels could not say they are not.
  const usedStems: string[] = [];
  const stemOf = () => {
    let stem = '';
    for (let tries = 0; tries < 200; tries++) {
      stem = capital(Array.from({ length: 2 + rnd.int(2) }, () => rnd.pick(STEM_SYLLABLES)).join(''));
      if (!usedStems.some((used) => lettersApart(used, stem.toLowerCase()) <= 2)) break;
    }
    usedStems.push(stem.toLowerCase());
    return stem;
  };
  const domainOf = (stem: string) => {
    let domain = `${stem.toLowerCase()}.${rnd.pick(['com', 'com', 'io', 'de', 'co.uk'])}`;
    for (let n = 2; domains.has(domain); n++) domain = `${stem.toLowerCase()}${n}.com`;
    domains.add(domain);
    return domain;
  };

  // Companies: a stem, what it does, and a legal form for most.
  const stems = new Map<string, { stem: string; descriptor: string; form: string[] | null }>();
  for (let i = 0; i < companyCount; i++) {
    const stem = stemOf();
    const descriptor = rnd.pick(DESCRIPTORS);
    const form = rnd.chance(0.6) ? rnd.pick(LEGAL_FORMS) : null;
    const name = `${stem} ${descriptor}${form ? (form[0].startsWith(',') ? form[0] : ` ${form[0]}`) : ''}`;
    const company: LabelledCompany = { key: key('co'), entity: entity(), kind: 'original', name, domain: domainOf(stem) };
    stems.set(company.key, { stem, descriptor, form });
    companies.push(company);
  }
  const originals = [...companies];
  // Three large companies, where many people share a surname.
  const large = originals.slice(0, 3);

  // Two people of one name at one company would be called duplicates by anyone: names are unique per company.
  const names = new Set<string>();
  const person = (company: LabelledCompany | null, surname?: string, firstName?: string): LabelledContact => {
    let first = firstName ?? rnd.pick(FIRST_NAMES);
    let last = surname ?? (rnd.chance(0.25) ? rnd.pick(COMMON_SURNAMES) : rnd.pick(SURNAMES));
    const nameKey = () => `${company?.key ?? ''}:${mailWord(first)}:${mailWord(last)}`;
    for (let tries = 0; names.has(nameKey()) && tries < 20; tries++) {
      if (!firstName) first = rnd.pick(FIRST_NAMES);
      else if (!surname) last = rnd.pick(SURNAMES);
    }
    names.add(nameKey());
    const [f, l] = [mailWord(first), mailWord(last)];
    const email = company?.domain
      ? uniqueEmail(rnd.pick([`${f}.${l}`, `${f[0]}${l}`, `${f}`, `${f}_${l}`]), company.domain)
      : uniqueEmail(rnd.pick([`${f}.${l}`, `${f}${l}`, `${l}.${f}`]), rnd.chance(0.5) ? 'gmail.com' : rnd.pick(PERSONAL_MAIL));
    const e164 = rnd.chance(0.6) ? phoneNumber(rnd) : null;
    const phone = e164 ? phoneFormat(e164, rnd.pick(['e164', 'international', 'national'] as const)) : null;
    if (phone && e164) numbers.set(phone, e164);
    return {
      key: key('c'),
      entity: entity(),
      kind: 'original',
      first_name: first,
      last_name: last,
      email,
      phone,
      company: company?.key ?? null,
    };
  };
  for (const company of originals) {
    const staff = large.includes(company) ? 30 : rnd.int(5);
    for (let i = 0; i < staff; i++) contacts.push(person(company, large.includes(company) && i % 3 === 0 ? rnd.pick(COMMON_SURNAMES) : undefined));
  }
  const withoutCompany = Math.round(contacts.length * 0.4);
  for (let i = 0; i < withoutCompany; i++) contacts.push(person(null));
  const people = [...contacts];

  const companyOf = (c: LabelledContact) => companies.find((co) => co.key === c.company) ?? null;
  const e164Of = (phone: string) => numbers.get(phone) ?? parsePhoneNumber(phone).number;
  const nicknameOf = (first: string) => {
    const folded = mailWord(first);
    const group = nicknameGroups.find((g) => g.includes(folded));
    const others = group?.filter((n) => n !== folded) ?? [];
    return others.length ? capital(rnd.pick(others)) : null;
  };

  /** A duplicate of a person: same entity, one kind of change. Null when the person cannot have that change. */
  const duplicateOf = (o: LabelledContact, kind: (typeof CONTACT_VARIANTS)[number]): LabelledContact | null => {
    const company = companyOf(o);
    const base = { ...o, key: key('c'), kind, phone: null as string | null };
    const elsewhere = () => {
      const [f, l] = [mailWord(base.first_name), mailWord(base.last_name)];
      // Another address of the same person: at the company's domain in another pattern, or a personal one.
      return company?.domain && rnd.chance(0.5)
        ? uniqueEmail(rnd.pick([`${f[0]}.${l}`, `${l}`, `${f}${l[0]}`]), company.domain)
        : uniqueEmail(`${f}${l}${rnd.int(90) + 10}`, rnd.pick(PERSONAL_MAIL));
    };
    const keptPhone = () => (o.phone && rnd.chance(0.3) ? otherPhoneFormat(rnd, e164Of(o.phone), o.phone, numbers) : null);
    const nameChange = (change: (d: LabelledContact) => boolean): LabelledContact | null => {
      // A name variant shares the company: the same company record, or only an address at its domain.
      if (!company) return null;
      if (!change(base)) return null;
      const sameRecord = rnd.chance(0.7);
      base.company = sameRecord ? o.company : null;
      const [f, l] = [mailWord(base.first_name), mailWord(base.last_name)];
      base.email = uniqueEmail(rnd.pick([`${f}.${l}`, `${f[0]}${l}`, `${l}.${f}`]) || 'someone', company.domain!);
      base.phone = keptPhone();
      return base;
    };
    switch (kind) {
      case 'name_typo_1':
      case 'name_typo_2':
        return nameChange((d) => {
          // A typo needs a name of three letters or more, two typos in one name five or more (a two-letter
          // name with a typo is another name); two typos otherwise fall one in each name.
          const edits = kind === 'name_typo_1' ? 1 : 2;
          const room = (name: string) => (name.length >= 5 ? 2 : name.length >= 3 ? 1 : 0);
          const parts = (['last_name', 'first_name'] as const).filter((part) => room(o[part]) >= edits);
          if (parts.length && (edits === 1 || rnd.chance(0.7))) {
            const part = parts.length > 1 && rnd.chance(0.4) ? parts[1] : parts[0];
            d[part] = typo(rnd, o[part], edits).text;
          } else if (edits === 2 && room(o.first_name) && room(o.last_name)) {
            d.first_name = typo(rnd, o.first_name, 1).text;
            d.last_name = typo(rnd, o.last_name, 1).text;
          } else return false;
          return d.first_name !== o.first_name || d.last_name !== o.last_name;
        });
      case 'accents_dropped':
        return nameChange((d) => {
          d.first_name = fold(o.first_name);
          d.last_name = fold(o.last_name);
          return d.first_name !== o.first_name || d.last_name !== o.last_name;
        });
      case 'nickname':
        return nameChange((d) => {
          const nick = nicknameOf(o.first_name);
          if (!nick) return false;
          d.first_name = nick;
          return true;
        });
      case 'name_swapped':
        return nameChange((d) => {
          [d.first_name, d.last_name] = [o.last_name, o.first_name];
          return true;
        });
      case 'case_spacing':
        return nameChange((d) => {
          d.first_name = rnd.chance(0.5) ? o.first_name.toUpperCase() : ` ${o.first_name.toLowerCase()}`;
          d.last_name = rnd.chance(0.5) ? `${o.last_name.toUpperCase()} ` : o.last_name.toLowerCase().replace(/ /g, '  ');
          return true;
        });
      case 'email_plus_tag':
      case 'email_case_tag': {
        const [local, domain] = o.email.split('@');
        const tag = rnd.pick(['news', 'crm', 'work', 'events']);
        const email = kind === 'email_plus_tag' ? `${local}+${tag}@${domain}` : `${capital(local)}+${tag}@${domain.toUpperCase()}`;
        if (emails.has(email.toLowerCase())) return null;
        emails.add(email.toLowerCase());
        return { ...base, email, company: rnd.chance(0.5) ? o.company : null };
      }
      case 'email_dots': {
        // Dots in the local part are ignored by Gmail only: the variant exists for Gmail addresses.
        const [local, domain] = o.email.split('@');
        if (domain !== 'gmail.com') return null;
        const plain = local.replace(/\./g, '');
        const email = plain !== local ? `${plain}@${domain}` : `${plain.slice(0, 2)}.${plain.slice(2)}@${rnd.pick(['gmail.com', 'googlemail.com'])}`;
        if (emails.has(email.toLowerCase())) return null;
        emails.add(email.toLowerCase());
        return { ...base, email, company: o.company };
      }
      case 'phone_format': {
        if (!o.phone) return null;
        return { ...base, email: elsewhere(), phone: otherPhoneFormat(rnd, e164Of(o.phone), o.phone, numbers), company: rnd.chance(0.5) ? o.company : null };
      }
    }
  };

  // Duplicates of about a third of the people, each kind as often as the people allow.
  for (const o of people) {
    if (!rnd.chance(0.35)) continue;
    for (let tries = 0; tries < 6; tries++) {
      const d = duplicateOf(o, rnd.pick(CONTACT_VARIANTS));
      if (d) {
        contacts.push(d);
        break;
      }
    }
  }

  // Hard negatives: another person who looks alike.
  for (const o of people) {
    if (!rnd.chance(0.2)) continue;
    const company = companyOf(o);
    const kind = rnd.pick(['same_first_name_company', 'family_shared_phone', 'same_surname_large_company'] as const);
    if (kind === 'same_first_name_company' && company) {
      let last = rnd.pick(SURNAMES);
      while (lettersApart(mailWord(last), mailWord(o.last_name)) <= 2 || names.has(`${company.key}:${mailWord(o.first_name)}:${mailWord(last)}`))
        last = rnd.pick(SURNAMES);
      contacts.push({ ...person(company, last, o.first_name), kind });
    } else if (kind === 'family_shared_phone' && o.phone) {
      // A partner or child: the surname and the home phone, another first name and address.
      // Another first name, not a nickname nor within two letters of the person's (Mei and Wei sharing a phone look like one person).
      let first = rnd.pick(FIRST_NAMES);
      while (
        lettersApart(mailWord(first), mailWord(o.first_name)) <= 2 ||
        nicknameGroups.some((g) => g.includes(mailWord(first)) && g.includes(mailWord(o.first_name)))
      )
        first = rnd.pick(FIRST_NAMES);
      const relative = person(null, o.last_name, first);
      contacts.push({ ...relative, kind, phone: rnd.chance(0.5) ? o.phone : otherPhoneFormat(rnd, e164Of(o.phone), o.phone, numbers) });
    } else if (kind === 'same_surname_large_company' && large.some((l) => l.key === o.company) && COMMON_SURNAMES.includes(o.last_name)) {
      let first = rnd.pick(FIRST_NAMES);
      while (mailWord(first) === mailWord(o.first_name) || names.has(`${company!.key}:${mailWord(first)}:${mailWord(o.last_name)}`))
        first = rnd.pick(FIRST_NAMES);
      contacts.push({ ...person(company, o.last_name, first), kind });
    }
  }

  // Companies: duplicates of about a quarter, and companies with another's stem.
  for (const o of originals) {
    const { stem, descriptor, form } = stems.get(o.key)!;
    const dup = (kind: (typeof COMPANY_VARIANTS)[number], name: string, domain: string | null) =>
      companies.push({ key: key('co'), entity: o.entity, kind, name, domain });
    // A duplicate made by hand usually has no domain, or the same one written another way.
    const domainMaybe = () => (rnd.chance(0.3) ? `www.${o.domain}` : null);
    const withForm = (text: string) => `${text}${form ? (form[0].startsWith(',') ? form[0] : ` ${form[0]}`) : ''}`;
    if (rnd.chance(0.25)) {
      const kind = rnd.pick(COMPANY_VARIANTS);
      if (kind === 'company_typo_1' || kind === 'company_typo_2')
        dup(kind, withForm(`${typo(rnd, stem, kind === 'company_typo_1' ? 1 : 2).text} ${descriptor}`), domainMaybe());
      else if (kind === 'company_suffix') {
        const other = form
          ? rnd.chance(0.4)
            ? ''
            : ` ${rnd.pick(form.slice(1)).replace(/^, /, '')}`
          : ` ${rnd.pick(rnd.pick(LEGAL_FORMS)).replace(/^, /, '')}`;
        dup(kind, `${stem} ${descriptor}${other}`.replace(/ ,/, ','), domainMaybe());
      } else
        // The API keeps a domain without scheme or path (a draft may have them): www. and case are what a stored one varies by.
        dup(
          kind,
          rnd.chance(0.5) ? o.name : o.name.toUpperCase(),
          rnd.pick([`www.${o.domain}`, `WWW.${o.domain!.toUpperCase()}`, `www.${capital(o.domain!)}`]),
        );
    } else if (rnd.chance(0.1)) {
      let other = rnd.pick(DESCRIPTORS);
      while (other === descriptor) other = rnd.pick(DESCRIPTORS);
      companies.push({ key: key('co'), entity: entity(), kind: 'company_same_stem', name: withForm(`${stem} ${other}`), domain: domainOf(`${stem}${other}`) });
    }
  }
  return { seed, companies, contacts };
}

if (require.main === module) {
  const [seed = '65', count = '600', file = join(__dirname, '..', '..', 'bench', 'data', `duplicates-${seed}-${count}.json`)] = process.argv.slice(2);
  const { NICKNAME_GROUPS } = require(join(__dirname, '..', 'apps', 'contacts', 'src', 'search', 'duplicate-nicknames.js'));
  const set = generateDuplicatesSet(Number(seed), Number(count), NICKNAME_GROUPS);
  writeFileSync(file, `${JSON.stringify(set, null, 1)}\n`);
  process.stdout.write(`${set.companies.length} companies, ${set.contacts.length} contacts → ${file}\n`);
}

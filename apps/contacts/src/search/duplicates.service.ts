import { CursorCodec, DomainError } from '@crm/common';
import { UpdateCompanyDto, UpdateContactDto, DuplicateReasonView, DuplicatesQuery, DuplicateView, PageOf, SearchLimits } from '@crm/contracts';
import { QueryBudget, RunStatement } from '@crm/records';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CONTACTS_SETTINGS, ContactsSettings } from '../contacts.settings';
import {
  COMPANY_EVIDENCE,
  CONTACT_EVIDENCE,
  compareCompanyNames,
  compareNames,
  foldName,
  nameWeight,
  phoneWeight,
  probability,
  samePhone,
} from './duplicate-evidence';
import { contactName } from './search-targets';

/** What a duplicate lookup past its budget (QueryBudget) is told to change. */
export const DUPLICATES_HINT = 'Compare fewer fields: a draft with an email or a phone alone is looked up by key; a name is compared by similarity.';

/** Each rule reads at most this many candidates, so one very common name cannot make a request unbounded. */
const RULE_CANDIDATES = 500;
/** Of a company's (or an email domain's) contacts, the closest surnames compared. */
const BLOCK_CANDIDATES = 100;
/** Contacts whose full name reaches this trigram similarity are compared whatever the size of the company. */
const NAME_TRIGRAMS = 0.6;
/** Of the companies sharing a name key, the closest names compared. */
const COMPANY_CANDIDATES = 50;
/** Surnames are counted up to this many holders; more weigh as "very common". */
const SURNAME_COUNT_CAP = 51;

/** Mailbox providers whose domain says nothing about a person's company. */
const SHARED_MAIL_DOMAINS = new Set([
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'live.com',
  'icloud.com',
  'me.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'gmx.com',
  'gmx.de',
  'web.de',
]);

/** Providers that ignore dots in an address's local part: `a.da@gmail.com` reaches `ada@gmail.com`. */
const DOTLESS_MAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/** An email as duplicates compare it: lower case, no +tag, and for Gmail no dots and one domain (the migration's duplicate_email_key). */
export function duplicateEmailKey(email: string | null | undefined): string | null {
  if (!email) return null;
  const key = email
    .trim()
    .toLowerCase()
    .replace(/\+[^@]*@/, '@');
  const [local, domain] = key.split('@');
  return DOTLESS_MAIL_DOMAINS.has(domain) ? `${local.replace(/\./g, '')}@gmail.com` : key;
}

interface ContactSubject {
  email?: string | null;
  first_name?: string | null;
  last_name?: string | null;
  phone?: string | null;
  company_id?: string | null;
}

interface CompanySubject {
  name?: string | null;
  domain?: string | null;
}

interface ContactRow extends ContactSubject {
  id: string;
}

interface CompanyRow {
  id: string;
  name: string | null;
  domain_key: string | null;
}

type Scored = Array<{ id: string; score: number; reasons: DuplicateReasonView[] }>;

const isKey = (key: unknown): key is [number, string] =>
  Array.isArray(key) && key.length === 2 && typeof key[0] === 'number' && key[0] >= 0 && key[0] <= 1 && typeof key[1] === 'string' && key[1].length <= 64;

const companyDomainOf = (email: string | null | undefined) => {
  const domain = duplicateEmailKey(email)?.split('@')[1];
  return domain && !SHARED_MAIL_DOMAINS.has(domain) ? domain : null;
};

/** GET /contacts/:id/duplicates, POST /contacts/duplicates and the same two for companies. */
@Injectable()
export class DuplicatesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    @Inject(CONTACTS_SETTINGS) private readonly settings: ContactsSettings,
  ) {}

  /** Every statement of one request under one budget: the caller's deadline, and nothing left running after it. */
  private read<T>(work: (run: RunStatement) => Promise<T>): Promise<T> {
    return new QueryBudget(this.settings.queryTimeoutMs, DUPLICATES_HINT).run(this.dataSource, work);
  }

  async ofContact(id: string, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    const found = await this.read(async (run) => {
      const [row] = await run<ContactSubject>(`SELECT id, email, first_name, last_name, phone, company_id FROM contacts WHERE id = $1`, [id]);
      if (!row) throw DomainError.notFound('contact', id);
      return this.contactDuplicates(run, row, id);
    });
    return this.page('contacts', found, query);
  }

  async ofContactDraft(draft: UpdateContactDto, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    if (!draft.email && !draft.phone && !draft.first_name && !draft.last_name) {
      throw DomainError.invalid('body', 'a draft contact needs an email, a phone or a name to be compared', 'missing_field');
    }
    return this.page('contacts', await this.read((run) => this.contactDuplicates(run, draft, null)), query);
  }

  async ofCompany(id: string, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    const found = await this.read(async (run) => {
      const [row] = await run<CompanySubject>(`SELECT id, name, domain FROM companies WHERE id = $1`, [id]);
      if (!row) throw DomainError.notFound('company', id);
      return this.companyDuplicates(run, row, id);
    });
    return this.page('companies', found, query);
  }

  async ofCompanyDraft(draft: UpdateCompanyDto, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    if (!draft.name && !draft.domain) throw DomainError.invalid('body', 'a draft company needs a name or a domain to be compared', 'missing_field');
    return this.page('companies', await this.read((run) => this.companyDuplicates(run, draft, null)), query);
  }

  /**
   * The candidates, in one statement: the same email key, the same phone key, and, with a company or a
   * company email domain, that company's contacts with the closest surnames and anyone there whose full
   * name is trigram-similar; each is then weighed on every field (duplicate-evidence.ts).
   */
  private async contactDuplicates(run: RunStatement, subject: ContactSubject, self: string | null): Promise<Scored> {
    const rules = new CandidateStatement(self, 'id, first_name, last_name, email, phone, company_id');
    const emailKey = duplicateEmailKey(subject.email);
    if (emailKey) rules.add('contacts', `duplicate_email_key(email) = ${rules.param(emailKey)}`);
    if (subject.phone && subject.phone.replace(/\D/g, '').length >= 7) {
      rules.add('contacts', `search_phone_key(phone) = search_phone_key(${rules.param(subject.phone)})`);
    }
    const names = { first: foldName(subject.first_name), last: foldName(subject.last_name) };
    const domain = companyDomainOf(subject.email);
    if ((names.first || names.last) && (subject.company_id || domain)) {
      const block = `(company_id = ${rules.param(subject.company_id ?? null)}::text OR duplicate_email_domain(email) = ${rules.param(domain)}::text)`;
      const last = rules.param(names.last || names.first);
      rules.add(
        'contacts',
        block,
        `least(levenshtein_less_equal(search_fold(coalesce(last_name, '')), ${last}, 3), levenshtein_less_equal(search_fold(coalesce(first_name, '')), ${last}, 3)), id`,
        BLOCK_CANDIDATES,
      );
      const full = rules.param([subject.first_name, subject.last_name].filter(Boolean).join(' ').trim());
      rules.add(
        'contacts',
        `search_fold(${contactName('')}) % search_fold(${full}) AND ${block}
          AND (SELECT set_config('pg_trgm.similarity_threshold', '${NAME_TRIGRAMS}', true)) IS NOT NULL`,
      );
    }
    const candidates = await rules.run<ContactRow>(run);
    if (!candidates.length) return [];
    const phoneHolders = 1 + candidates.filter((c) => samePhone(subject.phone, c.phone)).length;
    const surnames = names.last ? await this.surnameHolders(run, names.last) : 0;
    const subjectDomain = companyDomainOf(subject.email);
    const weight = CONTACT_EVIDENCE;
    return candidates.flatMap((c) => {
      const reasons: DuplicateReasonView[] = [];
      let odds = weight.prior;
      if (emailKey && duplicateEmailKey(c.email) === emailKey) {
        odds += weight.sameEmail;
        reasons.push({ field: 'email', rule: 'same_normalized_email' });
      }
      if (samePhone(subject.phone, c.phone)) {
        odds += phoneWeight(phoneHolders);
        reasons.push({ field: 'phone', rule: 'same_phone' });
      }
      const compared = compareNames(names, { first: foldName(c.first_name), last: foldName(c.last_name) });
      const nameOdds = nameWeight(compared, surnames);
      odds += nameOdds;
      const sameCompany = (!!subject.company_id && subject.company_id === c.company_id) || (!!subjectDomain && subjectDomain === companyDomainOf(c.email));
      if (sameCompany) odds += weight.sameCompany;
      if (nameOdds > 0 && compared.first !== 'different' && compared.last !== 'different' && (sameCompany || reasons.length)) {
        reasons.push({ field: 'name', rule: 'similar_name', similarity: compared.similarity });
      }
      return reasons.length ? [{ id: c.id, score: probability(odds), reasons }] : [];
    });
  }

  /** How many contacts have this folded surname, up to SURNAME_COUNT_CAP (an index read). */
  private async surnameHolders(run: RunStatement, last: string): Promise<number> {
    const [row] = await run<{ n: string }>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM contacts WHERE search_fold(btrim(last_name)) = $1 LIMIT ${SURNAME_COUNT_CAP}) s`,
      [last],
    );
    return Number(row?.n ?? 0);
  }

  /**
   * The same domain key, and the names sharing a name key (the same name without legal form and blanks, or a
   * first word within its typos: IndexCompanyNameKeys1767800000000), closest first; then weighed (duplicate-evidence.ts).
   */
  private async companyDuplicates(run: RunStatement, subject: CompanySubject, self: string | null): Promise<Scored> {
    const rules = new CandidateStatement(self, 'id, name, search_domain_key(domain) AS domain_key');
    const domain = subject.domain ? rules.param(subject.domain) : null;
    if (domain) rules.add('companies', `search_domain_key(domain) = search_domain_key(${domain})`);
    if (subject.name) {
      const name = rules.param(subject.name);
      rules.add(
        'companies',
        `duplicate_company_keys(name) && duplicate_company_keys(${name})`,
        `levenshtein_less_equal(left(duplicate_company_name(name), 255), left(duplicate_company_name(${name}), 255), 8), id`,
        COMPANY_CANDIDATES,
      );
    }
    const candidates = await rules.run<CompanyRow>(run);
    if (!candidates.length) return [];
    const [subjectKey] = subject.domain ? await run<{ key: string | null }>(`SELECT search_domain_key($1) AS key`, [subject.domain]) : [{ key: null }];
    const weight = COMPANY_EVIDENCE;
    return candidates.flatMap((c) => {
      const reasons: DuplicateReasonView[] = [];
      let odds = weight.prior;
      if (subjectKey.key && c.domain_key) {
        if (subjectKey.key === c.domain_key) {
          odds += weight.sameDomain;
          reasons.push({ field: 'domain', rule: 'same_domain' });
        } else odds += weight.differentDomain;
      }
      const names = compareCompanyNames(subject.name ?? '', c.name ?? '');
      if (names.match !== 'missing') odds += weight.name[names.match];
      if (names.match === 'same' || names.match === 'similar') reasons.push({ field: 'name', rule: 'similar_name', similarity: names.similarity });
      return reasons.length ? [{ id: c.id, score: probability(odds), reasons }] : [];
    });
  }

  private page(object: 'contacts' | 'companies', found: Scored, query: DuplicatesQuery): PageOf<DuplicateView> {
    const minScore = query.min_score ?? 0.5;
    const all = found.filter((d) => d.score > 0 && d.score >= minScore).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const list = `duplicates:${object}`;
    const after = this.cursors.decode(list, query.cursor, isKey);
    const rest = after ? all.filter((d) => d.score < after[0] || (d.score === after[0] && d.id > after[1])) : all;
    const limit = query.limit ?? SearchLimits.defaultPage;
    const data = rest.slice(0, limit);
    const hasMore = rest.length > limit;
    const last = data[data.length - 1];
    return { data, has_more: hasMore, ...(hasMore ? { next_cursor: this.cursors.encode(list, [last.score, last.id]) } : {}) };
  }
}

/** The candidate look-ups of one request as the branches of one UNION ALL ($1 is the record itself, or null for a draft). */
class CandidateStatement {
  private readonly params: unknown[];
  private readonly branches: string[] = [];

  constructor(
    self: string | null,
    private readonly columns: string,
  ) {
    this.params = [self];
  }

  param(value: unknown): string {
    return `$${this.params.push(value)}`;
  }

  /** Rows of `table` meeting `where`, in `order`, at most `limit`. */
  add(table: string, where: string, order = 'id', limit = RULE_CANDIDATES): void {
    this.branches.push(`(SELECT ${this.columns} FROM ${table} WHERE ${where} AND id IS DISTINCT FROM $1::text ORDER BY ${order} LIMIT ${limit})`);
  }

  /** Each candidate once, whichever branches found it. */
  async run<T extends { id: string }>(run: RunStatement): Promise<T[]> {
    if (!this.branches.length) return [];
    const rows = await run<T>(this.branches.join('\nUNION ALL\n'), this.params);
    const seen = new Map<string, T>();
    for (const row of rows) if (!seen.has(row.id)) seen.set(row.id, row);
    return [...seen.values()];
  }
}

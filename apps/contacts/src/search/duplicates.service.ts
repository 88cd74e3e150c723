import { CursorCodec, DomainError } from '@crm/common';
import { UpdateCompanyDto, UpdateContactDto, DuplicateReasonView, DuplicatesQuery, DuplicateView, PageOf, SearchLimits } from '@crm/contracts';
import { QueryBudget, RunStatement } from '@crm/records';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CONTACTS_SETTINGS, ContactsSettings } from '../contacts.settings';
import { contactName } from './search-targets';

/**
 * The weight of each rule (docs/search.md). A duplicate's score combines the rules it meets as
 * independent evidence, 1 - (1 - w1)(1 - w2)…, so more rules score higher and no score passes 1; a name
 * rule's weight is scaled by the names' similarity.
 */
export const DUPLICATE_WEIGHTS = {
  contacts: { same_normalized_email: 0.9, same_phone: 0.8, similar_name: 0.7 },
  companies: { same_domain: 0.9, similar_name: 0.8 },
} as const;

/** Two names are similar from this trigram similarity of their folded forms. */
export const NAME_SIMILARITY = 0.6;

/** What a duplicate lookup past its budget (QueryBudget) is told to change. */
export const DUPLICATES_HINT = 'Compare fewer fields: a draft with an email or a phone alone is looked up by key; a name is compared by similarity.';

/** Each rule reads at most this many candidates, so one very common name cannot make a request unbounded. */
const RULE_CANDIDATES = 500;

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

type Found = Map<string, DuplicateReasonView[]>;

const isKey = (key: unknown): key is [number, string] =>
  Array.isArray(key) && key.length === 2 && typeof key[0] === 'number' && key[0] >= 0 && key[0] <= 1 && typeof key[1] === 'string' && key[1].length <= 64;

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
      return this.contactReasons(row, id).run(run);
    });
    return this.page('contacts', found, query);
  }

  async ofContactDraft(draft: UpdateContactDto, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    if (!draft.email && !draft.phone && !draft.first_name && !draft.last_name) {
      throw DomainError.invalid('body', 'a draft contact needs an email, a phone or a name to be compared', 'missing_field');
    }
    return this.page('contacts', await this.read((run) => this.contactReasons(draft, null).run(run)), query);
  }

  async ofCompany(id: string, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    const found = await this.read(async (run) => {
      const [row] = await run<CompanySubject>(`SELECT id, name, domain FROM companies WHERE id = $1`, [id]);
      if (!row) throw DomainError.notFound('company', id);
      return this.companyReasons(row, id).run(run);
    });
    return this.page('companies', found, query);
  }

  async ofCompanyDraft(draft: UpdateCompanyDto, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    if (!draft.name && !draft.domain) throw DomainError.invalid('body', 'a draft company needs a name or a domain to be compared', 'missing_field');
    return this.page('companies', await this.read((run) => this.companyReasons(draft, null).run(run)), query);
  }

  /** Each rule is one branch of a single statement: one round trip for all of them. */
  private contactReasons(subject: ContactSubject, self: string | null): RuleStatement {
    const rules = new RuleStatement(self);
    if (subject.email) {
      rules.add('email', 'same_normalized_email', 'contacts', `search_email_key(email) = search_email_key(${rules.param(subject.email)})`);
    }
    if (subject.phone) {
      const phone = rules.param(subject.phone);
      rules.add(
        'phone',
        'same_phone',
        'contacts',
        `search_phone_key(phone) = search_phone_key(${phone}) AND search_phone_rank(phone, search_digits(${phone})) > 0`,
      );
    }
    const name = [subject.first_name, subject.last_name].filter(Boolean).join(' ').trim();
    const domain = subject.email?.split('@')[1]?.toLowerCase();
    const companyDomain = domain && !SHARED_MAIL_DOMAINS.has(domain) ? domain : null;
    if (name && (subject.company_id || companyDomain)) {
      const sameCompany = `(company_id = ${rules.param(subject.company_id ?? null)}::text OR split_part(search_email_key(email), '@', 2) = ${rules.param(companyDomain)}::text)`;
      rules.similarNames('contacts', contactName(''), name, sameCompany);
    }
    return rules;
  }

  private companyReasons(subject: CompanySubject, self: string | null): RuleStatement {
    const rules = new RuleStatement(self);
    if (subject.domain) {
      rules.add('domain', 'same_domain', 'companies', `search_domain_key(domain) = search_domain_key(${rules.param(subject.domain)})`);
    }
    if (subject.name) rules.similarNames('companies', 'name', subject.name);
    return rules;
  }

  private page(object: 'contacts' | 'companies', found: Found, query: DuplicatesQuery): PageOf<DuplicateView> {
    const weights: Record<string, number> = DUPLICATE_WEIGHTS[object];
    const minScore = query.min_score ?? 0.5;
    const all = [...found]
      .map(([id, reasons]) => {
        const miss = reasons.reduce((left, r) => left * (1 - weights[r.rule] * (r.similarity ?? 1)), 1);
        return { id, score: Math.round((1 - miss) * 10_000) / 10_000, reasons };
      })
      .filter((d) => d.score > 0 && d.score >= minScore)
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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

/** The duplicate rules of one request as the branches of one UNION ALL ($1 is the record itself, or null for a draft). */
class RuleStatement {
  private readonly params: unknown[];
  private readonly branches: string[] = [];

  constructor(self: string | null) {
    this.params = [self];
  }

  param(value: unknown): string {
    return `$${this.params.push(value)}`;
  }

  /** Rows of `table` meeting `where` meet `rule` on `field`; `similarity` is SQL over the row. */
  add(field: string, rule: DuplicateReasonView['rule'], table: string, where: string, similarity = 'NULL::numeric', order = 'id'): void {
    this.branches.push(
      `(SELECT ${this.branches.length}::int AS branch, ${this.param(field)}::text AS field, ${this.param(rule)}::text AS rule, id, ${similarity} AS similarity
        FROM ${table} WHERE ${where} AND id IS DISTINCT FROM $1::text ORDER BY ${order} LIMIT ${RULE_CANDIDATES})`,
    );
  }

  /**
   * Rows whose folded name is trigram-similar to `name`, with the similarity. `%` is what the trigram index
   * (`<table>_search_name`) serves, with the session's pg_trgm.similarity_threshold: the uncorrelated
   * sub-select sets it for this statement's transaction and, being a constant condition, runs as a one-time
   * filter before the index is scanned. The explicit similarity test keeps the rule exact whatever the setting.
   */
  similarNames(table: string, expression: string, name: string, extra?: string): void {
    const q = this.param(name);
    const similarity = `similarity(search_fold(${expression}), search_fold(${q}))`;
    this.add(
      'name',
      'similar_name',
      table,
      `search_fold(${expression}) % search_fold(${q}) AND ${similarity} >= ${NAME_SIMILARITY}${extra ? ` AND ${extra}` : ''}
        AND (SELECT set_config('pg_trgm.similarity_threshold', '${NAME_SIMILARITY}', true)) IS NOT NULL`,
      `round(${similarity}::numeric, 2)`,
      'similarity DESC, id',
    );
  }

  async run(run: RunStatement): Promise<Found> {
    const found: Found = new Map();
    if (!this.branches.length) return found;
    const rows = await run<{ branch: number; field: string; rule: DuplicateReasonView['rule']; id: string; similarity: string | null }>(
      this.branches.join('\nUNION ALL\n'),
      this.params,
    );
    // Reasons in the order the rules are listed (weights descending), whatever order the branches ran in.
    for (const r of rows.sort((a, b) => a.branch - b.branch)) {
      const reason: DuplicateReasonView = { field: r.field, rule: r.rule, ...(r.similarity === null ? {} : { similarity: Number(r.similarity) }) };
      found.set(r.id, [...(found.get(r.id) ?? []), reason]);
    }
    return found;
  }
}

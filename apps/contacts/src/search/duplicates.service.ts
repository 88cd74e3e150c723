import { CursorCodec, DomainError } from '@crm/common';
import { UpdateCompanyDto, UpdateContactDto, DuplicateReasonView, DuplicatesQuery, DuplicateView, PageOf, SearchLimits } from '@crm/contracts';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
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
  ) {}

  async ofContact(id: string, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    const [row] = await this.dataSource.query(`SELECT id, email, first_name, last_name, phone, company_id FROM contacts WHERE id = $1`, [id]);
    if (!row) throw DomainError.notFound('contact', id);
    return this.page('contacts', await this.contactReasons(row, id), query);
  }

  async ofContactDraft(draft: UpdateContactDto, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    if (!draft.email && !draft.phone && !draft.first_name && !draft.last_name) {
      throw DomainError.invalid('body', 'a draft contact needs an email, a phone or a name to be compared', 'missing_field');
    }
    return this.page('contacts', await this.contactReasons(draft, null), query);
  }

  async ofCompany(id: string, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    const [row] = await this.dataSource.query(`SELECT id, name, domain FROM companies WHERE id = $1`, [id]);
    if (!row) throw DomainError.notFound('company', id);
    return this.page('companies', await this.companyReasons(row, id), query);
  }

  async ofCompanyDraft(draft: UpdateCompanyDto, query: DuplicatesQuery): Promise<PageOf<DuplicateView>> {
    if (!draft.name && !draft.domain) throw DomainError.invalid('body', 'a draft company needs a name or a domain to be compared', 'missing_field');
    return this.page('companies', await this.companyReasons(draft, null), query);
  }

  private contactReasons(subject: ContactSubject, self: string | null): Promise<Found> {
    return this.dataSource.transaction(async (m) => {
      const found: Found = new Map();
      const add = (id: string, reason: DuplicateReasonView) => found.set(id, [...(found.get(id) ?? []), reason]);
      if (subject.email) {
        const rows = await m.query(
          `SELECT id FROM contacts WHERE search_email_key(email) = search_email_key($1) AND id IS DISTINCT FROM $2 LIMIT ${RULE_CANDIDATES}`,
          [subject.email, self],
        );
        for (const r of rows) add(r.id, { field: 'email', rule: 'same_normalized_email' });
      }
      if (subject.phone) {
        const rows = await m.query(
          `SELECT id FROM contacts WHERE search_phone_key(phone) = search_phone_key($1) AND search_phone_rank(phone, search_digits($1)) > 0
             AND id IS DISTINCT FROM $2 LIMIT ${RULE_CANDIDATES}`,
          [subject.phone, self],
        );
        for (const r of rows) add(r.id, { field: 'phone', rule: 'same_phone' });
      }
      const name = [subject.first_name, subject.last_name].filter(Boolean).join(' ').trim();
      const domain = subject.email?.split('@')[1]?.toLowerCase();
      const companyDomain = domain && !SHARED_MAIL_DOMAINS.has(domain) ? domain : null;
      if (name && (subject.company_id || companyDomain)) {
        for (const r of await similarNames(
          m,
          'contacts',
          contactName(''),
          name,
          self,
          `(company_id = $3 OR split_part(search_email_key(email), '@', 2) = $4)`,
          [subject.company_id ?? null, companyDomain],
        )) {
          add(r.id, { field: 'name', rule: 'similar_name', similarity: r.similarity });
        }
      }
      return found;
    });
  }

  private companyReasons(subject: CompanySubject, self: string | null): Promise<Found> {
    return this.dataSource.transaction(async (m) => {
      const found: Found = new Map();
      const add = (id: string, reason: DuplicateReasonView) => found.set(id, [...(found.get(id) ?? []), reason]);
      if (subject.domain) {
        const rows = await m.query(
          `SELECT id FROM companies WHERE search_domain_key(domain) = search_domain_key($1) AND id IS DISTINCT FROM $2 LIMIT ${RULE_CANDIDATES}`,
          [subject.domain, self],
        );
        for (const r of rows) add(r.id, { field: 'domain', rule: 'same_domain' });
      }
      if (subject.name) {
        for (const r of await similarNames(m, 'companies', 'name', subject.name, self))
          add(r.id, { field: 'name', rule: 'similar_name', similarity: r.similarity });
      }
      return found;
    });
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

/** Rows whose folded name is trigram-similar to `name` (served by the search index on that expression), with the similarity. */
async function similarNames(
  m: EntityManager,
  table: string,
  expression: string,
  name: string,
  self: string | null,
  extra?: string,
  extraParams: unknown[] = [],
): Promise<Array<{ id: string; similarity: number }>> {
  await m.query(`SET LOCAL pg_trgm.similarity_threshold = ${NAME_SIMILARITY}`);
  const rows: Array<{ id: string; similarity: string }> = await m.query(
    `SELECT id, round(similarity(search_fold(${expression}), search_fold($1))::numeric, 2) AS similarity FROM ${table}
      WHERE search_fold(${expression}) % search_fold($1) AND id IS DISTINCT FROM $2${extra ? ` AND ${extra}` : ''}
      ORDER BY similarity DESC, id LIMIT ${RULE_CANDIDATES}`,
    [name, self, ...extraParams],
  );
  return rows.map((r) => ({ id: r.id, similarity: Number(r.similarity) }));
}

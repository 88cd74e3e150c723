import { canonicalJson, CursorCodec, diffFields, DomainError, findById, IdPrefix, isId, keysetPage, Page, SortablePageQuery } from '@crm/common';
import {
  ContactDealItem,
  ContactSummaryView,
  ContactsLimits,
  ContactView,
  CreateContactDto,
  EventType,
  ListContactsQuery,
  ListDealsForContactRequest,
  MergeContactsDto,
  Ops,
  ReassignContactRequest,
  RelatedSummary,
  RequestContext,
  UpdateContactDto,
  event,
} from '@crm/contracts';
import { mergedAwayChange, mergedChange, OutboxService, RpcCaller } from '@crm/messaging';
import { BatchRunner, likePattern, NOW_MS } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Company } from '../companies/company.entity';
import { ContactCompanies } from '../contact-companies/contact-companies';
import { User } from '../users/user.entity';
import { WorkLinks } from '../work-links/work-links.service';
import { Contact } from './contact.entity';
import { presentContact, presentContactSummary, presentContactWithIncluded } from './contact.presenter';
import { CONTACT_FIELDS } from './contact-rows';
import { ContactsBatchWriter } from './contacts.batch';

export { CONTACT_FIELDS, contactEmailTaken, newContactColumns } from './contact-rows';

/**
 * The text `search` matches: first and last name (so the full name too), then the email on a line of its
 * own. The contacts_search_trgm index is built on exactly this expression (a test holds them together),
 * which is what lets PostgreSQL use it.
 */
export const CONTACT_SEARCH_TEXT = `(coalesce(first_name, '') || ' ' || coalesce(last_name, '') || E'\\n' || email)`;

const LIST = 'contacts';

/** Fields a merge copies from the loser when the winner has none. The ICP score moves with its reason and date. */
const MERGE_FILLED_FIELDS = CONTACT_FIELDS.filter(
  (f) => !['email', 'metadata', 'custom_fields', 'icp_score', 'icp_score_reason', 'icp_scored_at'].includes(f.api),
);
const ICP_FIELDS = CONTACT_FIELDS.filter((f) => f.api.startsWith('icp_'));

/** `{data, included}`: what get, update and merge answer. */
export type ContactResponse = ReturnType<typeof presentContactWithIncluded>;

const withIncluded = ({ contact, company, owner }: ContactWithCompany): ContactResponse => presentContactWithIncluded(contact, company, owner);

export interface ContactWithCompany {
  contact: Contact;
  company: Company | null;
  owner: User | null;
}

function emptyValue(value: unknown): boolean {
  return value === null || value === undefined || value === '';
}

@Injectable()
export class ContactsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    private readonly rpc: RpcCaller,
    private readonly links: WorkLinks,
    private readonly contactCompanies: ContactCompanies,
    private readonly batches: BatchRunner,
    private readonly writer: ContactsBatchWriter,
  ) {}

  /**
   * A batch of one through the contacts' writer, so a single create follows every rule a batch or an import
   * does; `within` runs it in a savepoint of that transaction (an import's row) instead of its own.
   */
  async create(ctx: RequestContext, dto: CreateContactDto, within?: EntityManager): Promise<ContactSummaryView> {
    return (await this.batches.one(ctx, this.writer, { create: [{ index: 0, body: dto }] }, within)) as ContactSummaryView;
  }

  async list(query: ListContactsQuery): Promise<Page<ContactSummaryView>> {
    const rangeFiltered = [
      query.icp_score_min,
      query.icp_score_max,
      query.icp_scored_after,
      query.icp_scored_before,
      query.created_after,
      query.created_before,
    ].some((v) => v !== undefined);
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(Contact), 'c', LIST, query, { rangeFiltered });
    if (query.stage) qb.andWhere('c.stage = :stage', { stage: query.stage });
    if (query.source) qb.andWhere('c.source = :source', { source: query.source });
    if (query.company_id) qb.andWhere('c.company_id = :companyId', { companyId: query.company_id });
    if (query.owner_id) qb.andWhere('c.owner_id = :ownerId', { ownerId: query.owner_id });
    // Exactly the indexed expression, so the trigram index serves the ILIKE.
    if (query.search) qb.andWhere(`${CONTACT_SEARCH_TEXT} ILIKE :pattern`, { pattern: likePattern(query.search) });
    if (query.icp_score_min !== undefined) qb.andWhere('c.icp_score >= :icpMin', { icpMin: query.icp_score_min });
    if (query.icp_score_max !== undefined) qb.andWhere('c.icp_score <= :icpMax', { icpMax: query.icp_score_max });
    if (query.icp_scored_after) qb.andWhere('c.icp_scored_at > :scoredAfter', { scoredAfter: new Date(query.icp_scored_after) });
    if (query.icp_scored_before) qb.andWhere('c.icp_scored_at < :scoredBefore', { scoredBefore: new Date(query.icp_scored_before) });
    if (query.created_after) qb.andWhere('c.created_at > :createdAfter', { createdAfter: new Date(query.created_after) });
    if (query.created_before) qb.andWhere('c.created_at < :createdBefore', { createdBefore: new Date(query.created_before) });
    return read(presentContactSummary);
  }

  async get(id: string): Promise<ContactResponse> {
    const contact = await this.find(this.dataSource.manager, id);
    return withIncluded({ contact, ...(await this.relatedOf(this.dataSource.manager, contact)) });
  }

  async update(ctx: RequestContext, id: string, dto: UpdateContactDto, within?: EntityManager): Promise<ContactResponse> {
    const data = (await this.batches.one(ctx, this.writer, { update: [{ index: 0, id, body: dto }] }, within)) as ContactView;
    return { data, included: [data.relationships.company, data.relationships.owner].filter((r): r is RelatedSummary => r !== null) };
  }

  /**
   * Deletes a contact. Its activities and tasks that also belong to a deal stay with the deal and lose
   * the contact; the rest are deleted with it. The deals service unlinks the contact from its deals when
   * it sees contact.deleted.
   */
  async remove(ctx: RequestContext, id: string): Promise<void> {
    await this.batches.one(ctx, this.writer, { remove: [{ index: 0, id }] });
  }

  /**
   * Merges `loser` into `winner`. Deals move first, over NATS, before anything here is locked: if that
   * fails nothing here has changed and the error is returned, and no contact row stays locked for the
   * length of a remote call. Then one transaction locks both contacts, moves activities and tasks, fills
   * the winner and deletes the loser with `contact.deleted {merged_into}`. That event is the merge's
   * record: the deals service moves any deal still on the loser (one linked while the merge ran) when it
   * consumes it, idempotently. If the transaction fails after the deals moved, retrying the merge
   * completes it, because moving deals again is a no-op.
   */
  async merge(ctx: RequestContext, dto: MergeContactsDto): Promise<ContactResponse> {
    return withIncluded(await this.applyMerge(ctx, dto));
  }

  private async applyMerge(ctx: RequestContext, dto: MergeContactsDto): Promise<ContactWithCompany> {
    if (dto.winner_id === dto.loser_id) {
      throw DomainError.invalid('loser_id', 'loser_id must differ from winner_id: a contact cannot be merged with itself', 'same_contact');
    }
    if (!isId(dto.winner_id, IdPrefix.Contact)) throw DomainError.notFound('contact', dto.winner_id);
    if (!isId(dto.loser_id, IdPrefix.Contact)) throw DomainError.notFound('contact', dto.loser_id);
    await this.bothExist(dto.winner_id, dto.loser_id);
    const reassign: ReassignContactRequest = { from_contact_id: dto.loser_id, to_contact_id: dto.winner_id };
    await this.rpc.call(Ops.dealsInternal.reassignContact, ctx, { body: reassign });

    return this.dataSource.transaction(async (m) => {
      // Both rows, locked in id order so two opposite merges cannot deadlock.
      const locked = await m
        .getRepository(Contact)
        .createQueryBuilder('c')
        .setLock('pessimistic_write')
        .where('c.id IN (:...ids)', { ids: [dto.winner_id, dto.loser_id] })
        .orderBy('c.id', 'ASC')
        .getMany();
      const winner = locked.find((c) => c.id === dto.winner_id);
      const loser = locked.find((c) => c.id === dto.loser_id);
      if (!winner) throw DomainError.notFound('contact', dto.winner_id);
      if (!loser) throw DomainError.notFound('contact', dto.loser_id);

      await this.links.move(m, loser.id, winner.id);
      const { set, changes } = diffFields(winner, this.fillFromLoser(winner, loser), CONTACT_FIELDS);
      const companies = await this.contactCompanies.moveOwner(m, loser.id, winner.id, set.companyId ?? winner.companyId);
      await m.delete(Contact, { id: loser.id });
      if (changes.changed.length) await m.update(Contact, { id: winner.id }, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<Contact>);
      // The winner's entry is `merged` even when the merge filled nothing: it names the loser.
      await this.outbox.record(m, {
        events: [
          event(EventType.ContactDeleted, { contact_id: loser.id, merged_into: winner.id }),
          ...(changes.changed.length ? [event(EventType.ContactUpdated, { contact_id: winner.id, ...changes })] : []),
          ...companies.events,
        ],
        changes: [
          mergedAwayChange('contacts', loser.id, winner.id, presentContact(loser, null, null)),
          mergedChange('contacts', winner.id, loser.id, changes),
          ...companies.changes,
        ],
      });
      const merged = await m.findOneByOrFail(Contact, { id: winner.id });
      return { contact: merged, ...(await this.relatedOf(m, merged)) };
    });
  }

  /** 404 for the first of the two that does not exist, before the deals service is asked anything. */
  private async bothExist(winnerId: string, loserId: string): Promise<void> {
    const rows: Array<{ id: string }> = await this.dataSource.query(`SELECT id FROM contacts WHERE id = ANY($1::text[])`, [[winnerId, loserId]]);
    const found = new Set(rows.map((r) => r.id));
    if (!found.has(winnerId)) throw DomainError.notFound('contact', winnerId);
    if (!found.has(loserId)) throw DomainError.notFound('contact', loserId);
  }

  /** GET /contacts/:id/deals: the contact must exist here; its deals are listed by the deals service. */
  async listDeals(ctx: RequestContext, id: string, query: SortablePageQuery): Promise<Page<ContactDealItem>> {
    await this.find(this.dataSource.manager, id);
    const body: ListDealsForContactRequest = { contact_id: id, cursor: query.cursor, limit: query.limit, sort: query.sort };
    return this.rpc.call(Ops.dealsInternal.listForContact, ctx, { body });
  }

  /** Throws 404 unless the contact exists; `lock` holds it until the transaction ends. */
  async find(m: EntityManager, id: string, lock = false): Promise<Contact> {
    if (!isId(id, IdPrefix.Contact)) throw DomainError.notFound('contact', id);
    const contact = await findById(m, Contact, id, lock);
    if (!contact) throw DomainError.notFound('contact', id);
    return contact;
  }

  private async relatedOf(m: EntityManager, contact: Contact): Promise<Omit<ContactWithCompany, 'contact'>> {
    const [company, owner] = await Promise.all([
      contact.companyId ? findById(m, Company, contact.companyId) : null,
      contact.ownerId ? findById(m, User, contact.ownerId) : null,
    ]);
    return { company, owner };
  }

  /** The merge input: each field empty on the winner takes the loser's value; metadata keys only the winner lacks. */
  private fillFromLoser(winner: Contact, loser: Contact): Record<string, unknown> {
    const input: Record<string, unknown> = {};
    for (const field of MERGE_FILLED_FIELDS) {
      if (emptyValue(winner[field.prop]) && !emptyValue(loser[field.prop])) input[field.api] = loser[field.prop];
    }
    if (winner.icpScore === null && loser.icpScore !== null) {
      for (const field of ICP_FIELDS)
        input[field.api] = field.kind === 'date' ? ((loser[field.prop] as Date | null)?.toISOString() ?? null) : loser[field.prop];
    }
    const metadata = { ...(loser.metadata ?? {}), ...(winner.metadata ?? {}) };
    // The merged metadata must still fit the limits; if it would not, the winner's is kept as it is.
    if (
      canonicalJson(metadata) !== canonicalJson(winner.metadata ?? {}) &&
      Object.keys(metadata).length <= ContactsLimits.metadataKeys &&
      Buffer.byteLength(JSON.stringify(metadata)) <= ContactsLimits.metadataBytes
    ) {
      input.metadata = metadata;
    }
    return input;
  }
}

import { ChangeSet, CursorCodec, hydrate, keysetPage, Page } from '@crm/common';
import { AssociationOfItem, ContactDealItem, EventType, ListDealsForContactRequest, ReassignContactReply, ResolveDealsReply, event } from '@crm/contracts';
import { OutboxService, updatedChange } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { DealContacts } from '../deal-contacts/deal-contacts';
import { Deal } from '../deals/deal.entity';
import { presentDeal, presentDealSummary } from '../deals/deal.presenter';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';

/** How deals follow what happens to contacts, companies and activities in the contacts service. */
@Injectable()
export class ContactLinksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
    @Inject(DEALS_SETTINGS) private readonly settings: DealsSettings,
    private readonly dealContacts: DealContacts,
  ) {}

  /** Every deal the contact is associated with, primary or not, with the association's role. */
  async listForContact(body: ListDealsForContactRequest): Promise<Page<ContactDealItem>> {
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(Deal), 'd', `contacts/${body.contact_id}/deals`, body);
    qb.innerJoin('deal_contacts', 'dc', 'dc.deal_id = d.id AND dc.contact_id = :contactId', { contactId: body.contact_id });
    const associations = new Map<string, AssociationOfItem>();
    return read(
      (deal) => ({ ...presentDealSummary(deal), association: associations.get(deal.id) ?? { role: null, is_primary: false } }),
      async (deals) => {
        if (!deals.length) return;
        const rows = (await this.dataSource.query(`SELECT deal_id, role, is_primary FROM deal_contacts WHERE contact_id = $1 AND deal_id = ANY($2::text[])`, [
          body.contact_id,
          deals.map((d) => d.id),
        ])) as Array<{ deal_id: string; role: string | null; is_primary: boolean }>;
        for (const row of rows) associations.set(row.deal_id, { role: row.role, is_primary: row.is_primary });
      },
    );
  }

  /** Idempotent: a retried merge finds nothing left to move and emits nothing. */
  async reassignContact(from: string, to: string): Promise<ReassignContactReply> {
    if (from === to) return { moved: 0 };
    const moved = await this.dataSource.transaction((m) => this.relinkContactIn(m, from, to));
    return { moved };
  }

  async resolve(ids: string[]): Promise<ResolveDealsReply> {
    if (!ids.length) return { deals: [] };
    const rows = (await this.dataSource.query(`SELECT id, name FROM deals WHERE id = ANY($1::text[]) ORDER BY id`, [[...new Set(ids)]])) as Array<{
      id: string;
      name: string;
    }>;
    return { deals: rows.map((r) => ({ type: 'deal', id: r.id, name: r.name })) };
  }

  relinkContact(m: EntityManager, from: string, to: string): Promise<number> {
    return from === to ? Promise.resolve(0) : this.relinkContactIn(m, from, to);
  }

  /** A deleted contact leaves every deal: its associations go, and it stops being any deal's contact_id. */
  async unlinkContact(m: EntityManager, contactId: string): Promise<number> {
    const moved = await this.relinkIn(m, 'contact_id', contactId, null);
    await this.outbox.record(m, await this.dealContacts.removeForTargets(m, [contactId]));
    return moved;
  }

  unlinkCompany(m: EntityManager, companyId: string): Promise<number> {
    return this.relinkIn(m, 'company_id', companyId, null);
  }

  /**
   * Keeps the latest activity time (events may arrive late or carry a past occurred_at). A deal that was
   * reported stale becomes eligible again only when the new activity brings it back under the threshold,
   * so the next report needs a fresh crossing.
   */
  async recordActivity(m: EntityManager, dealId: string, occurredAt: Date): Promise<void> {
    await m.query(
      `UPDATE deals SET
         last_activity_at = $2,
         stale_notified_at = CASE WHEN $2 > clock_timestamp() - make_interval(secs => $3::double precision / 1000) THEN NULL ELSE stale_notified_at END
       WHERE id = $1 AND (last_activity_at IS NULL OR last_activity_at < $2)`,
      [dealId, occurredAt, this.settings.staleAfterMs],
    );
  }

  /** A merged contact's deals follow it to the winner: their contact_id, and every association it had, without duplicates. */
  private async relinkContactIn(m: EntityManager, from: string, to: string): Promise<number> {
    const moved = await this.relinkIn(m, 'contact_id', from, to);
    await this.outbox.record(m, await this.dealContacts.moveTarget(m, from, to));
    return moved;
  }

  private async relinkIn(m: EntityManager, column: 'contact_id' | 'company_id', from: string, to: string | null): Promise<number> {
    const [rows] = (await m.query(`UPDATE deals SET ${column} = $2, updated_at = clock_timestamp() WHERE ${column} = $1 RETURNING *`, [from, to])) as [
      Array<Record<string, unknown>>,
      number,
    ];
    const deals = rows.map((row) => hydrate(m, Deal, row)).sort((a, b) => a.id.localeCompare(b.id));
    const changes: ChangeSet = { changed: [column], previous: { [column]: from }, current: { [column]: to } };
    await this.outbox.record(m, {
      // `record`: the deal as a query answers it, for copies kept from an export (docs/exports.md).
      events: deals.map((deal) => event(EventType.DealUpdated, { deal_id: deal.id, ...changes, record: presentDeal(deal) })),
      changes: deals.map((deal) => updatedChange('deals', deal.id, changes)),
    });
    return rows.length;
  }
}

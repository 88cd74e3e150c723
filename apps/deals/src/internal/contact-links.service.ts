import { ChangeSet, keysetPage, Page } from '@crm/common';
import { DealSummary, DealUpdatedData, EventType, ListDealsForContactRequest, ReassignContactReply, ResolveDealsReply } from '@crm/contracts';
import { OutboxService, updatedChange } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Deal } from '../deals/deal.entity';
import { presentDealSummary } from '../deals/deal.presenter';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';

/** How deals follow what happens to contacts, companies and activities in the contacts service. */
@Injectable()
export class ContactLinksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    @Inject(DEALS_SETTINGS) private readonly settings: DealsSettings,
  ) {}

  async listForContact(body: ListDealsForContactRequest): Promise<Page<DealSummary>> {
    const { qb, read } = keysetPage(this.dataSource.getRepository(Deal), 'd', `contacts/${body.contact_id}/deals`, body);
    qb.andWhere('d.contact_id = :contactId', { contactId: body.contact_id });
    return read(presentDealSummary);
  }

  /** Idempotent: a retried merge finds nothing left to move and emits nothing. */
  async reassignContact(from: string, to: string): Promise<ReassignContactReply> {
    if (from === to) return { moved: 0 };
    const moved = await this.relink(`contact_id`, from, to);
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
    return from === to ? Promise.resolve(0) : this.relinkIn(m, 'contact_id', from, to);
  }

  unlinkContact(m: EntityManager, contactId: string): Promise<number> {
    return this.relinkIn(m, 'contact_id', contactId, null);
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

  private async relink(column: 'contact_id' | 'company_id', from: string, to: string | null): Promise<number> {
    return this.dataSource.transaction((m) => this.relinkIn(m, column, from, to));
  }

  private async relinkIn(m: EntityManager, column: 'contact_id' | 'company_id', from: string, to: string | null): Promise<number> {
    const [rows] = (await m.query(`UPDATE deals SET ${column} = $2, updated_at = clock_timestamp() WHERE ${column} = $1 RETURNING id`, [from, to])) as [
      Array<{ id: string }>,
      number,
    ];
    const ids = rows.map((r) => r.id).sort((a, b) => a.localeCompare(b));
    const changes: ChangeSet = { changed: [column], previous: { [column]: from }, current: { [column]: to } };
    await this.outbox.record(m, {
      events: ids.map((id) => ({ type: EventType.DealUpdated, data: { deal_id: id, ...changes } satisfies DealUpdatedData })),
      changes: ids.map((id) => updatedChange('deals', id, changes)),
    });
    return rows.length;
  }
}

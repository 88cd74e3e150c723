import {
  CursorCodec,
  DomainError,
  findById,
  IdPrefix,
  insertReturning,
  isId,
  keysetPage,
  newId,
  Page,
  PageQuery,
  updateReturning,
  viewChanges,
} from '@crm/common';
import { CreateLineItemDto, event, EventDraft, EventType, LineItemLimits, LineItemView, RequestContext, UpdateLineItemDto } from '@crm/contracts';
import { ChangeDraft, OutboxService } from '@crm/messaging';
import { NOW_MS } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { dealChanges, dealUpdatedChange } from '../deals/deal-changes';
import { Deal } from '../deals/deal.entity';
import { Product } from '../products/product.entity';
import { lineAmount, presentLineItem } from './line-amount';
import { LineItem } from './line-item.entity';

/** The fields of a line a PATCH can change, with the amount they imply, in the order line_item.updated reports them. */
const CHANGEABLE = ['name', 'quantity', 'unit_price', 'discount_percent', 'currency', 'amount'] as const;

/**
 * A deal's line items (docs/products.md). Every write locks the deal's row first, so writes to one deal's
 * lines take turns: a deal whose value follows its lines (`value_from_line_items`) gets the new sum in the
 * same transaction as the line, with one deal.updated and one history entry when the sum changed, and two
 * concurrent line writes cannot both read the sum the other has not added yet.
 */
@Injectable()
export class LineItemsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
  ) {}

  async add(_ctx: RequestContext, dealId: string, dto: CreateLineItemDto): Promise<LineItemView> {
    return this.dataSource.transaction(async (m) => {
      const deal = await this.lockDeal(m, dealId);
      const product = dto.product_id ? await this.product(m, dto.product_id) : null;
      const name = dto.name ?? product?.name;
      if (name === undefined) throw DomainError.invalid('name', 'name is required for a line without a product_id.', 'required');
      const unitPrice = dto.unit_price ?? product?.price;
      if (unitPrice === undefined) throw DomainError.invalid('unit_price', 'unit_price is required for a line without a product_id.', 'required');
      // A price taken from the product is in the product's currency.
      const currency = dto.currency ?? (dto.unit_price === undefined && product ? product.currency : deal.currency);
      sameCurrency(currency, deal);
      const [{ count }]: Array<{ count: number }> = await m.query(`SELECT count(*)::int AS count FROM line_items WHERE deal_id = $1`, [deal.id]);
      if (count >= LineItemLimits.perDeal) {
        throw DomainError.invalid('deal_id', `A deal has at most ${LineItemLimits.perDeal} line items.`, 'limit_exceeded');
      }
      const discount = dto.discount_percent ?? 0;
      const line = await insertReturning(m, LineItem, {
        id: newId(IdPrefix.LineItem),
        dealId: deal.id,
        productId: product?.id ?? null,
        name,
        quantity: dto.quantity,
        unitPrice,
        discountPercent: discount,
        currency,
        amount: lineAmount(dto.quantity, unitPrice, discount),
      });
      const view = presentLineItem(line);
      await this.record(m, deal, event(EventType.LineItemCreated, { line_item_id: line.id, ...view }));
      return view;
    });
  }

  async list(dealId: string, query: PageQuery): Promise<Page<LineItemView>> {
    await this.findDeal(this.dataSource.manager, dealId);
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(LineItem), 'l', `deals/${dealId}/line_items`, query);
    qb.andWhere('l.deal_id = :dealId', { dealId });
    return read(presentLineItem);
  }

  async update(_ctx: RequestContext, dealId: string, lineId: string, dto: UpdateLineItemDto): Promise<LineItemView> {
    return this.dataSource.transaction(async (m) => {
      const deal = await this.lockDeal(m, dealId);
      const line = await this.line(m, deal, lineId);
      const next = { ...line, ...definedOf(dto) };
      sameCurrency(next.currency, deal);
      next.amount = lineAmount(next.quantity, next.unitPrice, next.discountPercent);
      const changes = viewChanges(presentLineItem(line), presentLineItem(next), CHANGEABLE);
      if (!changes.changed.length) return presentLineItem(line);
      const { name, quantity, unitPrice, discountPercent, currency, amount } = next;
      const updated = await updateReturning(m, LineItem, line.id, { name, quantity, unitPrice, discountPercent, currency, amount, updatedAt: () => NOW_MS });
      await this.record(m, deal, event(EventType.LineItemUpdated, { line_item_id: line.id, deal_id: deal.id, ...changes }));
      return presentLineItem(updated);
    });
  }

  async remove(_ctx: RequestContext, dealId: string, lineId: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const deal = await this.lockDeal(m, dealId);
      const line = await this.line(m, deal, lineId);
      await m.query(`DELETE FROM line_items WHERE id = $1`, [line.id]);
      await this.record(m, deal, event(EventType.LineItemDeleted, { line_item_id: line.id, ...presentLineItem(line) }));
    });
  }

  /**
   * The line's event, and for a deal whose value follows its lines the new sum written to the deal with
   * its deal.updated and history entry, in the line's transaction (the deal's row is locked).
   */
  private async record(m: EntityManager, deal: Deal, lineEvent: EventDraft): Promise<void> {
    const events: EventDraft[] = [lineEvent];
    const changes: Array<ChangeDraft | null> = [];
    if (deal.valueFromLineItems) {
      const [{ total }]: Array<{ total: string }> = await m.query(`SELECT coalesce(sum(amount), 0)::text AS total FROM line_items WHERE deal_id = $1`, [
        deal.id,
      ]);
      if (BigInt(total) > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw DomainError.invalid('amount', `The deal's value would exceed ${Number.MAX_SAFE_INTEGER} cents.`);
      }
      if (Number(total) !== deal.value) {
        const after = await updateReturning(m, Deal, deal.id, { value: Number(total), updatedAt: () => NOW_MS });
        const dealChange = dealChanges(deal, after);
        events.push(event(EventType.DealUpdated, { deal_id: deal.id, ...dealChange }));
        changes.push(dealUpdatedChange(deal.id, dealChange));
      }
    }
    await this.outbox.record(m, { events, changes });
  }

  private async lockDeal(m: EntityManager, id: string): Promise<Deal> {
    return this.findDeal(m, id, true);
  }

  private async findDeal(m: EntityManager, id: string, lock = false): Promise<Deal> {
    const deal = isId(id, IdPrefix.Deal) ? await findById(m, Deal, id, lock) : null;
    if (!deal) throw DomainError.notFound('deal', id);
    return deal;
  }

  private async line(m: EntityManager, deal: Deal, id: string): Promise<LineItem> {
    const line = isId(id, IdPrefix.LineItem) ? await findById(m, LineItem, id) : null;
    if (!line || line.dealId !== deal.id) throw DomainError.notFound('line item', id);
    return line;
  }

  private async product(m: EntityManager, id: string): Promise<Product> {
    const product = await findById(m, Product, id);
    if (!product) throw DomainError.invalid('product_id', `No product with id '${id}'.`, 'not_found');
    return product;
  }
}

/** A line's currency is its deal's: a line in another currency would make the deal's sum meaningless. */
function sameCurrency(currency: string, deal: Deal): void {
  if (currency !== deal.currency) {
    throw DomainError.invalid('currency', `The line's currency ${currency} is not the deal's (${deal.currency}).`, 'currency_mismatch');
  }
}

/** The entity properties a PATCH body sets. */
function definedOf(dto: UpdateLineItemDto): Partial<LineItem> {
  const set: Partial<LineItem> = {};
  if (dto.name !== undefined) set.name = dto.name;
  if (dto.quantity !== undefined) set.quantity = dto.quantity;
  if (dto.unit_price !== undefined) set.unitPrice = dto.unit_price;
  if (dto.discount_percent !== undefined) set.discountPercent = dto.discount_percent;
  if (dto.currency !== undefined) set.currency = dto.currency;
  return set;
}

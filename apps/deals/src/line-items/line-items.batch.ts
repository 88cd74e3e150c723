import { DomainError, hydrate, IdPrefix, isId, newId, updateReturning, viewChanges } from '@crm/common';
import { CreateLineItemDto, event, EventType, LineItemLimits, LineItemView, RequestContext, UpdateLineItemDto } from '@crm/contracts';
import { BatchWriter, CreateItem, DeleteItem, ItemOutcome, NOW_MS, UpdateItem, UpsertKey } from '@crm/records';
import { EntityManager, In } from 'typeorm';
import { dealChanges, dealUpdatedChange } from '../deals/deal-changes';
import { Deal } from '../deals/deal.entity';
import { findDeal } from '../deals/find-deal';
import { Product } from '../products/product.entity';
import { lineAmount, presentLineItem } from './line-amount';
import { LineItem } from './line-item.entity';

/** The fields of a line a PATCH can change, with the amount they imply, in the order line_item.updated reports them. */
const CHANGEABLE = ['name', 'quantity', 'unit_price', 'discount_percent', 'currency', 'amount'] as const;

type Outcome = ItemOutcome<LineItemView>;
type NewLine = Omit<LineItem, 'createdAt' | 'updatedAt'>;

/**
 * One deal's line items as the batch runner writes them (docs/products.md): a single add, change or removal
 * is a batch of one, `POST /deals/:id/line_items/batch` up to 200. Every write locks the deal's row first,
 * so writes to one deal's lines take turns; a deal whose value follows its lines gets the new sum once per
 * write, after its lines, with one deal.updated and one history entry when the sum changed. Two concurrent
 * writes therefore cannot both sum without the other's lines.
 */
export class DealLineItemsWriter implements BatchWriter<CreateLineItemDto, UpdateLineItemDto, LineItemView> {
  readonly noun = 'line item';
  readonly createBody = CreateLineItemDto;
  readonly updateBody = UpdateLineItemDto;

  constructor(private readonly dealId: string) {}

  async insert(m: EntityManager, _ctx: RequestContext, items: CreateItem<CreateLineItemDto>[]): Promise<Outcome[]> {
    const deal = await findDeal(m, this.dealId, true);
    const ids = [...new Set(items.flatMap((item) => (item.body.product_id ? [item.body.product_id] : [])))];
    const products = new Map((ids.length ? await m.getRepository(Product).findBy({ id: In(ids) }) : []).map((p) => [p.id, p]));
    const [{ count }]: Array<{ count: number }> = await m.query(`SELECT count(*)::int AS count FROM line_items WHERE deal_id = $1`, [deal.id]);
    let lines = count;
    const outcomes: Outcome[] = [];
    const rows: NewLine[] = [];
    for (const { index, body } of items) {
      try {
        if (lines >= LineItemLimits.perDeal) {
          throw DomainError.invalid('deal_id', `A deal has at most ${LineItemLimits.perDeal} line items.`, 'limit_exceeded');
        }
        const row = newLine(deal, body, body.product_id ? products.get(body.product_id) : undefined);
        rows.push(row);
        lines++;
        outcomes.push({ index, status: 201, data: { id: row.id } as LineItemView });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        outcomes.push({ index, error: err });
      }
    }
    const inserted = rows.length ? await m.createQueryBuilder().insert().into(LineItem).values(rows).returning('*').execute() : undefined;
    const stored = new Map(((inserted?.raw ?? []) as Record<string, unknown>[]).map((raw) => [raw.id as string, hydrate(m, LineItem, raw)]));
    for (const outcome of outcomes.filter((o) => !o.error)) {
      outcome.data = presentLineItem(stored.get(outcome.data!.id)!);
      outcome.events = [event(EventType.LineItemCreated, { line_item_id: outcome.data.id, ...outcome.data })];
    }
    return this.withDealValue(m, deal, outcomes);
  }

  async update(m: EntityManager, _ctx: RequestContext, items: UpdateItem<UpdateLineItemDto>[]): Promise<Outcome[]> {
    const deal = await findDeal(m, this.dealId, true);
    const lines = await linesOf(m, deal, items);
    const outcomes: Outcome[] = [];
    for (const { index, id, body } of items) {
      const line = lines.get(id);
      try {
        if (!line) throw DomainError.notFound('line item', id);
        const next = { ...line, ...definedOf(body) };
        sameCurrency(next.currency, deal);
        next.amount = lineAmount(next.quantity, next.unitPrice, next.discountPercent);
        const changes = viewChanges(presentLineItem(line), presentLineItem(next), CHANGEABLE);
        if (!changes.changed.length) {
          outcomes.push({ index, status: 200, data: presentLineItem(line) });
          continue;
        }
        const { name, quantity, unitPrice, discountPercent, currency, amount } = next;
        const updated = await updateReturning(m, LineItem, line.id, { name, quantity, unitPrice, discountPercent, currency, amount, updatedAt: () => NOW_MS });
        outcomes.push({
          index,
          status: 200,
          data: presentLineItem(updated),
          events: [event(EventType.LineItemUpdated, { line_item_id: line.id, deal_id: deal.id, ...changes })],
        });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        outcomes.push({ index, error: err });
      }
    }
    return this.withDealValue(m, deal, outcomes);
  }

  async remove(m: EntityManager, _ctx: RequestContext, items: DeleteItem[]): Promise<Outcome[]> {
    const deal = await findDeal(m, this.dealId, true);
    const lines = await linesOf(m, deal, items);
    const outcomes: Outcome[] = items.map(({ index, id }) => {
      const line = lines.get(id);
      if (!line) return { index, error: DomainError.notFound('line item', id) };
      return { index, status: 204, events: [event(EventType.LineItemDeleted, { line_item_id: line.id, ...presentLineItem(line) })] };
    });
    const gone = items.filter(({ id }) => lines.has(id)).map(({ id }) => id);
    if (gone.length) await m.query(`DELETE FROM line_items WHERE id = ANY($1::text[])`, [gone]);
    return this.withDealValue(m, deal, outcomes);
  }

  async upsertKey(): Promise<UpsertKey<CreateLineItemDto>> {
    throw DomainError.invalid('operation', 'line items have no unique field to match an upsert on; use create or update.', 'upsert_unsupported');
  }

  /**
   * For a deal whose value follows its lines: the new sum written to the deal, its deal.updated and history
   * entry recorded after the last line applied (the runner records outcomes in item order).
   */
  private async withDealValue(m: EntityManager, deal: Deal, outcomes: Outcome[]): Promise<Outcome[]> {
    const last = outcomes.filter((o) => !o.error && o.events?.length).at(-1);
    if (!deal.valueFromLineItems || !last) return outcomes;
    const [{ total }]: Array<{ total: string }> = await m.query(`SELECT coalesce(sum(amount), 0)::text AS total FROM line_items WHERE deal_id = $1`, [deal.id]);
    if (BigInt(total) > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw DomainError.invalid('amount', `The deal's value would exceed ${Number.MAX_SAFE_INTEGER} cents.`);
    }
    if (Number(total) === deal.value) return outcomes;
    const after = await updateReturning(m, Deal, deal.id, { value: Number(total), updatedAt: () => NOW_MS });
    const changes = dealChanges(deal, after);
    last.events = [...last.events!, event(EventType.DealUpdated, { deal_id: deal.id, ...changes })];
    last.changes = [...(last.changes ?? []), dealUpdatedChange(deal.id, changes)];
    return outcomes;
  }
}

/** A new line's row: its name and price from its product unless given, in the deal's currency. */
function newLine(deal: Deal, dto: CreateLineItemDto, product: Product | undefined): NewLine {
  if (dto.product_id && !product) throw DomainError.invalid('product_id', `No product with id '${dto.product_id}'.`, 'not_found');
  const name = dto.name ?? product?.name;
  if (name === undefined) throw DomainError.invalid('name', 'name is required for a line without a product_id.', 'required');
  const unitPrice = dto.unit_price ?? product?.price;
  if (unitPrice === undefined) throw DomainError.invalid('unit_price', 'unit_price is required for a line without a product_id.', 'required');
  // A price taken from the product is in the product's currency.
  const currency = dto.currency ?? (dto.unit_price === undefined && product ? product.currency : deal.currency);
  sameCurrency(currency, deal);
  const discountPercent = dto.discount_percent ?? 0;
  return {
    id: newId(IdPrefix.LineItem),
    dealId: deal.id,
    productId: product?.id ?? null,
    name,
    quantity: dto.quantity,
    unitPrice,
    discountPercent,
    currency,
    amount: lineAmount(dto.quantity, unitPrice, discountPercent),
  };
}

/** The deal's lines among those the items name, by id; a line of another deal is not found. */
async function linesOf(m: EntityManager, deal: Deal, items: Array<{ id: string }>): Promise<Map<string, LineItem>> {
  const ids = items.map((item) => item.id).filter((id) => isId(id, IdPrefix.LineItem));
  const lines = ids.length ? await m.getRepository(LineItem).findBy({ id: In(ids), dealId: deal.id }) : [];
  return new Map(lines.map((line) => [line.id, line]));
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

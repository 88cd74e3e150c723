import { DomainError, findById, IdPrefix, isId } from '@crm/common';
import { EntityManager } from 'typeorm';
import { Deal } from './deal.entity';

/** The deal with `id` (its row locked for the transaction when `lock`), or a 404 naming it. */
export async function findDeal(m: EntityManager, id: string, lock = false): Promise<Deal> {
  const deal = isId(id, IdPrefix.Deal) ? await findById(m, Deal, id, lock) : null;
  if (!deal) throw DomainError.notFound('deal', id);
  return deal;
}

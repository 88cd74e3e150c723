import { DomainError } from '@crm/common';
import { BuiltInSlug, Ops, RequestContext, ResolveDealsRequest } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/**
 * Checks that a referenced contact exists and keeps it from being deleted until the caller commits
 * (FOR KEY SHARE conflicts with the FOR UPDATE a delete or merge takes first).
 */
export async function requireContact(manager: EntityManager, id: string, field = 'contact_id'): Promise<void> {
  const rows: unknown[] = await manager.query(`SELECT 1 FROM contacts WHERE id = $1 FOR KEY SHARE`, [id]);
  if (!rows.length) throw DomainError.invalid(field, `No contact with id '${id}'.`, 'not_found');
}

export async function requireCompany(manager: EntityManager, id: string, field = 'company_id'): Promise<void> {
  const rows: unknown[] = await manager.query(`SELECT 1 FROM companies WHERE id = $1 FOR KEY SHARE`, [id]);
  if (!rows.length) throw DomainError.invalid(field, `No company with id '${id}'.`, 'not_found');
}

/** Owners are team members (`users`); a user being deleted waits for this transaction, and the other way round. */
export async function requireUser(manager: EntityManager, id: string, field = 'owner_id'): Promise<void> {
  const rows: unknown[] = await manager.query(`SELECT 1 FROM users WHERE id = $1 FOR KEY SHARE`, [id]);
  if (!rows.length) throw DomainError.invalid(field, `No user with id '${id}'.`, 'not_found');
}

/** How a writer learns which records another service keeps exist: one request for every object a batch names. */
export interface RemoteRecords {
  existingOf(ctx: RequestContext, wanted: ReadonlyMap<BuiltInSlug, string[]>): Promise<Map<BuiltInSlug, Set<string>>>;
}

/** Deals live in the deals service; their existence is asked for over NATS. */
@Injectable()
export class DealDirectory implements RemoteRecords {
  constructor(private readonly rpc: RpcCaller) {}

  async existingOf(ctx: RequestContext, wanted: ReadonlyMap<BuiltInSlug, string[]>): Promise<Map<BuiltInSlug, Set<string>>> {
    const found = new Map<BuiltInSlug, Set<string>>();
    for (const [slug, ids] of wanted) {
      if (slug !== 'deals') throw new Error(`the deals service answers for deals only, not '${slug}'`);
      found.set(slug, await this.existing(ctx, ids));
    }
    return found;
  }

  async exists(ctx: RequestContext, dealId: string): Promise<boolean> {
    return (await this.existing(ctx, [dealId])).has(dealId);
  }

  /** Which of `dealIds` exist, with one request. */
  async existing(ctx: RequestContext, dealIds: string[]): Promise<Set<string>> {
    if (!dealIds.length) return new Set();
    const body: ResolveDealsRequest = { deal_ids: dealIds };
    const reply = await this.rpc.call(Ops.dealsInternal.resolve, ctx, { body });
    return new Set(reply.deals.map((deal) => deal.id));
  }

  /** For a deal_id in a request body: an unknown deal is the client's mistake (400). */
  async requireDeal(ctx: RequestContext, dealId: string, field = 'deal_id'): Promise<void> {
    if (!(await this.exists(ctx, dealId))) throw DomainError.invalid(field, `No deal with id '${dealId}'.`, 'not_found');
  }
}

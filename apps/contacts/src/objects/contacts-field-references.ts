import { DomainError, ErrorCode } from '@crm/common';
import { hasCapability, keptBy, Ops, RequestContext, ResolveDealsReply, ResolveDealsRequest, SlugKeptBy, SlugWith, ValidationWarning } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { CustomFieldReferences, enforceFieldValues, enforceFieldValuesOfMany, EnforcementInput, EnforcementTarget } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/**
 * How the deals service is asked which records of each referenceable object it keeps exist. An object the
 * registry makes referenceable and kept there, without an entry here, does not compile (rather than being
 * looked up among custom object records and never found).
 */
const KEPT_BY_DEALS: Record<
  SlugWith<'referenceable'> & SlugKeptBy<'deals'>,
  { ask(ids: string[]): ResolveDealsRequest; found(reply: ResolveDealsReply): string[] }
> = {
  deals: { ask: (ids) => ({ deal_ids: ids }), found: (reply) => reply.deals.map((d) => d.id) },
};

/**
 * What custom field values of this service's objects may refer to: its own built-in records and custom
 * object records, and deals (asked of the deals service).
 */
@Injectable()
export class ContactsFieldReferences extends CustomFieldReferences {
  constructor(private readonly rpc: RpcCaller) {
    super();
  }

  async canReference(m: EntityManager, target: string, ownSlug: string): Promise<boolean> {
    if (hasCapability(target, 'referenceable') || target === ownSlug) return true;
    const rows: unknown[] = await m.query(`SELECT 1 FROM object_types WHERE slug = $1`, [target]);
    return rows.length > 0;
  }

  async existing(m: EntityManager, ctx: RequestContext, target: string, ids: string[]): Promise<Set<string>> {
    if (keptBy(target, 'deals')) {
      if (!hasCapability(target, 'referenceable')) return new Set();
      const kept = KEPT_BY_DEALS[target];
      return new Set(kept.found(await this.rpc.call(Ops.dealsInternal.resolve, ctx, { body: kept.ask(ids) })));
    }
    // A referenceable built-in object of this service lives in the table its slug names.
    const rows: { id: string }[] = keptBy(target, 'contacts')
      ? await m.query(`SELECT id FROM ${target} WHERE id = ANY($1) FOR KEY SHARE`, [ids])
      : await m.query(
          `SELECT r.id FROM object_records r JOIN object_types t ON t.id = r.object_type_id
            WHERE t.slug = $1 AND r.id = ANY($2) FOR KEY SHARE OF r`,
          [target, ids],
        );
    return new Set(rows.map((r) => r.id));
  }

  /** Checks a custom object record's values at its object's enforcement level. */
  enforce(m: EntityManager, ctx: RequestContext, target: EnforcementTarget, input: EnforcementInput): Promise<ValidationWarning[]> {
    return enforceFieldValues(m, target, input, (t, ids) => this.existing(m, ctx, t, ids));
  }

  /** Checks the values of many records of one custom object (a batch): each one's warnings or error. */
  enforceMany(m: EntityManager, ctx: RequestContext, target: EnforcementTarget, inputs: EnforcementInput[]): Promise<Array<ValidationWarning[] | DomainError>> {
    return enforceFieldValuesOfMany(m, target, inputs, (t, ids) => this.existing(m, ctx, t, ids));
  }
}

/** A write to an archived object type. */
export function archivedObject(slug: string): DomainError {
  return new DomainError(ErrorCode.Conflict, `The object type '${slug}' is archived; its records are read-only until it is made active again.`);
}

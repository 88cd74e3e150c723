import { builtInEntry, hasCapability, Ops, RequestContext } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { CustomFieldReferences } from '@crm/records';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/**
 * What a custom field of deals or pipelines may refer to: a referenceable object this service keeps, or one
 * the contacts service resolves (contacts, companies).
 */
function referenceable(target: string) {
  const entry = builtInEntry(target);
  return entry && hasCapability(target, 'referenceable') && (entry.service === 'deals' || entry.resolvedAs) ? entry : undefined;
}

@Injectable()
export class DealsFieldReferences extends CustomFieldReferences {
  constructor(private readonly rpc: RpcCaller) {
    super();
  }

  async canReference(_m: EntityManager, target: string): Promise<boolean> {
    return referenceable(target) !== undefined;
  }

  async existing(m: EntityManager, ctx: RequestContext, target: string, ids: string[]): Promise<Set<string>> {
    const entry = referenceable(target);
    if (entry?.service === 'deals') {
      // An object of this service lives in the table its slug names.
      const rows: { id: string }[] = await m.query(`SELECT id FROM ${entry.slug} WHERE id = ANY($1) FOR KEY SHARE`, [ids]);
      return new Set(rows.map((r) => r.id));
    }
    if (!entry?.resolvedAs) return new Set();
    const { request, reply: answer } = entry.resolvedAs;
    const reply = await this.rpc.call(Ops.contactsInternal.resolve, ctx, { body: { [request]: ids } });
    return new Set(reply[answer]?.map((r) => r.id) ?? []);
  }
}

import { Ops, RequestContext, ResolveContactsRequest } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { CustomFieldReferences } from '@crm/runtime';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';

/** Targets a custom field of deals or pipelines may refer to: deals here, contacts and companies in the contacts service. */
const TARGETS = ['contacts', 'companies', 'deals'] as const;

@Injectable()
export class DealsFieldReferences extends CustomFieldReferences {
  constructor(private readonly rpc: RpcCaller) {
    super();
  }

  async canReference(_m: EntityManager, target: string): Promise<boolean> {
    return (TARGETS as readonly string[]).includes(target);
  }

  async existing(m: EntityManager, ctx: RequestContext, target: string, ids: string[]): Promise<Set<string>> {
    if (target === 'deals') {
      const rows: { id: string }[] = await m.query(`SELECT id FROM deals WHERE id = ANY($1) FOR KEY SHARE`, [ids]);
      return new Set(rows.map((r) => r.id));
    }
    const body: ResolveContactsRequest = target === 'contacts' ? { contact_ids: ids } : { company_ids: ids };
    const reply = await this.rpc.call(Ops.contactsInternal.resolve, ctx, { body });
    return new Set((target === 'contacts' ? reply.contacts : reply.companies)?.map((r) => r.id) ?? []);
  }
}

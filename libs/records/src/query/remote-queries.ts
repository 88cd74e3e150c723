import { Ops, RequestContext } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { RemoteQueries, RemoteRelation } from './remote-matching';

const OWNERS = {
  contacts: { match: Ops.contactsInternal.queryMatch, values: Ops.contactsInternal.queryValues, fields: Ops.contactsInternal.queryFields },
  deals: { match: Ops.dealsInternal.queryMatch, values: Ops.dealsInternal.queryValues, fields: Ops.dealsInternal.queryFields },
} satisfies Record<RemoteRelation['via'], unknown>;

/** A query's remote relations answered over RPC by the services that keep their records, on behalf of the caller. */
export function remoteQueriesOver(rpc: RpcCaller, ctx: RequestContext): RemoteQueries {
  return {
    match: async (relation, prefix, lookups, within, waitMs) =>
      (
        await rpc.call(
          OWNERS[relation.via].match,
          ctx,
          { body: { object: relation.object, prefix, lookups, ...(within ? { within } : {}) } },
          { timeoutMs: waitMs },
        )
      ).ids,
    values: (relation, prefix, ids, fields, waitMs) =>
      rpc.call(OWNERS[relation.via].values, ctx, { body: { object: relation.object, prefix, ids, fields } }, { timeoutMs: waitMs }),
    fields: async (relation, prefix) => (await rpc.call(OWNERS[relation.via].fields, ctx, { body: { object: relation.object, prefix } })).fields,
  };
}

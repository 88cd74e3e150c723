import { ExportObject, ExportPageRequest, Ops, PageOf, RequestContext } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';

/** The operation of the service that keeps each object, answering its export's pages. */
const PAGE_OPS = { contacts: Ops.contactsInternal.exportPage, deals: Ops.dealsInternal.exportPage } as const satisfies Record<ExportObject, unknown>;

/** Asks the service that keeps an object for a page of its rows: that service reads its own tables, never this one. */
@Injectable()
export class ExportPages {
  constructor(private readonly rpc: RpcCaller) {}

  page(ctx: RequestContext, object: ExportObject, request: Omit<ExportPageRequest, 'object'>): Promise<PageOf<Record<string, unknown>>> {
    return this.rpc.call(PAGE_OPS[object], ctx, { body: { object, ...request } });
  }
}

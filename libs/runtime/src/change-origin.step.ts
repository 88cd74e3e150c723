import type { ChangeVia } from '@crm/contracts';
import { changeOriginScope, channelFor, originOf } from '@crm/messaging';
import { SetMetadata } from '@nestjs/common';
import { RequestStep, ServiceRequest } from './service-request.interceptor';

const OPERATION_VIA = 'crm:operation-via';

/** Marks a handler whose operation records its changes under its own channel (set by @Handles). */
export const OperationVia = (via: ChangeVia) => SetMetadata(OPERATION_VIA, via);

/**
 * Runs every request a service handles inside its origin: the caller's key or user, the channel (the
 * request's, or the operation's own for a batch, capture or merge) and the request id. The events and
 * change entries the handler records take it from there (OutboxService.record).
 */
export class ChangeOrigin implements RequestStep {
  around({ payload, execution }: ServiceRequest, next: () => Promise<unknown>): Promise<unknown> {
    const ctx = payload?.ctx;
    if (!ctx || typeof ctx !== 'object') return next();
    const operationVia = Reflect.getMetadata(OPERATION_VIA, execution.getHandler()) as ChangeVia | undefined;
    // The handler runs inside the scope, so it and everything it awaits see the origin.
    return changeOriginScope.run(originOf(ctx, channelFor(ctx.via, operationVia)), next);
  }
}

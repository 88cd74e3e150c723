import type { ChangeVia, RpcRequest } from '@crm/contracts';
import { changeOriginScope, channelFor, originOf } from '@crm/messaging';
import { CallHandler, ExecutionContext, NestInterceptor, SetMetadata } from '@nestjs/common';
import { from, lastValueFrom, Observable } from 'rxjs';

const OPERATION_VIA = 'crm:operation-via';

/** Marks a handler whose operation records its changes under its own channel (set by @Handles). */
export const OperationVia = (via: ChangeVia) => SetMetadata(OPERATION_VIA, via);

/**
 * Runs every request a service handles inside its origin: the caller's key or user, the channel (the
 * request's, or the operation's own for a batch, capture or merge) and the request id. The events and
 * change entries the handler records take it from there (OutboxService.record).
 */
export class ChangeOriginInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const ctx = (context.switchToRpc().getData() as Partial<RpcRequest> | undefined)?.ctx;
    if (!ctx || typeof ctx !== 'object') return next.handle();
    const operationVia = Reflect.getMetadata(OPERATION_VIA, context.getHandler()) as ChangeVia | undefined;
    const origin = originOf(ctx, channelFor(ctx.via, operationVia));
    // handle() is subscribed inside the scope, so the handler and everything it awaits see it.
    return from(changeOriginScope.run(origin, () => lastValueFrom(next.handle(), { defaultValue: undefined })));
  }
}

import type { ValidationWarning } from '@crm/contracts';
import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { AsyncLocalStorage } from 'async_hooks';
import { from, lastValueFrom, Observable } from 'rxjs';

interface Collected {
  warnings: ValidationWarning[];
}

const collected = new AsyncLocalStorage<Collected>();

/**
 * Records what a soft-enforced write of a built-in object accepted although it broke a custom field
 * definition. The last report wins, so a transaction that runs again does not count its warnings twice.
 */
export function reportSoftWarnings(warnings: ValidationWarning[]): void {
  const box = collected.getStore();
  if (box) box.warnings = warnings;
}

/**
 * Adds `warnings` to a write's `{data}` reply when its custom fields broke a soft-enforced definition, as
 * custom object records do, without every service method threading them through its return type.
 */
@Injectable()
export class SoftWarningsInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const box: Collected = { warnings: [] };
    // Subscribed inside the scope, so the handler and the transaction it opens see the collector.
    return from(
      collected.run(box, async () => {
        const reply = await lastValueFrom(next.handle(), { defaultValue: undefined });
        if (!box.warnings.length || typeof reply !== 'object' || reply === null || !('data' in reply)) return reply;
        return { ...reply, warnings: box.warnings };
      }),
    );
  }
}

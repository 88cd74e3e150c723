import { serviceUnavailable, withDeadline } from '@crm/messaging';
import { RequestStep, ServiceRequest } from './service-request.interceptor';

/**
 * Runs every request a service answers until the moment its caller stops waiting: the wait the caller
 * sent (`ctx.timeout_ms`), or RPC_TIMEOUT_MS from a caller that names none. Queries spend no longer on
 * it, and the calls it makes to other services wait no longer (RpcCaller).
 */
export class RequestDeadline implements RequestStep {
  constructor(private readonly defaultWaitMs: number) {}

  around({ payload }: ServiceRequest, next: () => Promise<unknown>): Promise<unknown> {
    const named = payload?.ctx?.timeout_ms;
    if (typeof named === 'number' && named <= 0) return Promise.reject(serviceUnavailable('The caller stopped waiting before the request was handled.'));
    return withDeadline(typeof named === 'number' && Number.isFinite(named) ? named : this.defaultWaitMs, next);
  }
}

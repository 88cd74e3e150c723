import { DomainError, ErrorCode } from '@crm/common';
import { MessagingMetrics } from '@crm/messaging';
import { RequestStep, ServiceRequest } from './service-request.interceptor';

/** Rate, errors and duration of every request a service handles over NATS, by request name. */
export class RpcMetrics implements RequestStep {
  constructor(private readonly metrics: MessagingMetrics) {}

  async around({ pattern }: ServiceRequest, next: () => Promise<unknown>): Promise<unknown> {
    // Ids travel in the payload, so labelling by request name keeps the label set as small as the list of operations.
    const end = this.metrics.rpcDuration.startTimer({ pattern });
    try {
      const reply = await next();
      end({ outcome: 'ok' });
      return reply;
    } catch (err) {
      end({ outcome: err instanceof DomainError ? err.code : ErrorCode.Internal });
      throw err;
    }
  }
}

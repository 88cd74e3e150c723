import { DomainError, ErrorCode } from '@crm/common';
import { rpcSubject, RpcReply, RpcRequest } from '@crm/contracts';
import { ErrorCode as NatsErrorCode, NatsConnection, NatsError } from 'nats';
import { decodeJson, encodeJson } from './nats';

function serviceOf(name: string): string {
  return name.split('.')[0];
}

/** Asks another service over NATS request/reply. Never hangs: no answer within the timeout is a 503. */
export class RpcClient {
  constructor(
    private readonly nc: NatsConnection,
    private readonly namespace: string,
    private readonly timeoutMs: number,
  ) {}

  /** Largest request the broker accepts; the gateway turns larger bodies into 413 before sending. */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  encode(request: RpcRequest): Uint8Array {
    return encodeJson(request);
  }

  async call(name: string, request: RpcRequest | Uint8Array, timeoutMs = this.timeoutMs): Promise<RpcReply> {
    const payload = request instanceof Uint8Array ? request : encodeJson(request);
    try {
      const msg = await this.nc.request(rpcSubject(this.namespace, name), payload, { timeout: timeoutMs });
      return decodeJson<RpcReply>(msg.data);
    } catch (err) {
      const code = (err as NatsError).code;
      const service = serviceOf(name);
      if (code === NatsErrorCode.NoResponders) {
        return unavailable(`The ${service} service is not available; try again shortly.`);
      }
      if (code === NatsErrorCode.Timeout) {
        return unavailable(`The ${service} service did not answer within ${timeoutMs} ms; try again shortly.`);
      }
      if (code === NatsErrorCode.MaxPayloadExceeded) {
        return { ok: false, error: { code: ErrorCode.PayloadTooLarge, message: 'The request is too large to process.' } };
      }
      return unavailable(`The ${service} service could not be reached: ${(err as Error).message}`);
    }
  }

  /** Like `call`, but returns the body and throws the service's error as a DomainError. */
  async request<T>(name: string, request: RpcRequest, timeoutMs?: number): Promise<T> {
    const reply = await this.call(name, request, timeoutMs);
    if (!reply.ok) throw new DomainError(reply.error.code, reply.error.message, reply.error.details);
    return reply.body as T;
  }
}

function unavailable(message: string): RpcReply {
  return { ok: false, error: { code: ErrorCode.ServiceUnavailable, message } };
}

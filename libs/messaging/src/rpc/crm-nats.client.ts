import { DomainError, ErrorCode, traceparentOf } from '@crm/common';
import { rpcSubject } from '@crm/contracts';
import { ClientNats, NatsOptions, ReadPacket, WritePacket } from '@nestjs/microservices';
import { headers as natsHeaders, ErrorCode as NatsErrorCode, Msg, MsgHdrs, NatsError } from 'nats';
import { catchError, Observable, throwError } from 'rxjs';
import { serviceUnavailable, toDomainError } from './rpc-errors';

/** The active span's `traceparent`, when tracing is on, so the answering service continues the trace. */
function withTraceparent(given: MsgHdrs | undefined): MsgHdrs | undefined {
  const traceparent = traceparentOf();
  if (!traceparent) return given;
  const headers = given ?? natsHeaders();
  headers.set('traceparent', traceparent);
  return headers;
}

/** Injection token of the ClientProxy every process uses to ask the services. */
export const CRM_RPC = Symbol('CRM_RPC');

export interface CrmNatsClientOptions {
  servers: string;
  /** Connection name shown by the NATS server, e.g. `crm-gateway`. */
  name: string;
  /** The deployment's subject prefix (CRM_NAMESPACE). */
  namespace: string;
  /** How long a request may wait for its answer before it fails as 503. */
  timeoutMs: number;
}

/**
 * NestJS's NATS client, adapted to our deployments: patterns are sent on `<namespace>.rpc.<pattern>`,
 * every request has a deadline, and every failure arrives as a DomainError, so callers only ever see
 * the callee's own error or a 503 `service_unavailable` (no responder, timeout, broker down), 413 for a
 * request over the broker's payload limit, or 501 for an operation the running service lacks.
 *
 * Requests go through the connection's own request/reply, which shares one reply subscription among
 * all requests, instead of Nest's subscribe-and-unsubscribe of an inbox per request.
 */
export class CrmNatsClient extends ClientNats {
  private readonly namespace: string;
  private readonly timeoutMs: number;

  constructor({ namespace, timeoutMs, ...connection }: CrmNatsClientOptions) {
    // noAsyncTraces: nats.js would otherwise capture two stack traces per request, only to label a timeout.
    super({
      ...connection,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      pingInterval: 10_000,
      noAsyncTraces: true,
    } as NonNullable<NatsOptions['options']>);
    this.namespace = namespace;
    this.timeoutMs = timeoutMs;
  }

  /** Largest message the broker accepts, once connected. */
  get maxPayload(): number {
    return this.natsClient?.info?.max_payload ?? 1024 * 1024;
  }

  override send<TResult = unknown, TInput = unknown>(pattern: string, data: TInput): Observable<TResult> {
    const service = pattern.split('.')[0];
    return super.send<TResult, TInput>(pattern, data).pipe(catchError((err: unknown) => throwError(() => this.failure(err, service))));
  }

  protected override normalizePattern(pattern: string): string {
    return rpcSubject(this.namespace, super.normalizePattern(pattern));
  }

  protected override publish(partialPacket: ReadPacket, callback: (packet: WritePacket) => unknown): () => void {
    let cancelled = false;
    try {
      const packet = this.assignPacketId(partialPacket);
      const answer = this.createSubscriptionHandler(packet, callback);
      const { data, headers } = this.serializer.serialize(packet) as { data: Uint8Array; headers?: MsgHdrs };
      this.natsClient!.request(this.normalizePattern(packet.pattern), data, { timeout: this.timeoutMs, headers: withTraceparent(this.mergeHeaders(headers)) }).then(
        (msg: Msg) => (cancelled ? undefined : answer(undefined, msg as Parameters<typeof answer>[1])),
        (err: unknown) => (cancelled ? undefined : callback({ err, isDisposed: true })),
      );
    } catch (err) {
      callback({ err, isDisposed: true });
    }
    return () => {
      cancelled = true;
    };
  }

  private failure(err: unknown, service: string): DomainError {
    switch ((err as NatsError | undefined)?.code) {
      case NatsErrorCode.NoResponders:
        return serviceUnavailable(`The ${service} service is not available; try again shortly.`);
      case NatsErrorCode.Timeout:
        return serviceUnavailable(`The ${service} service did not answer within ${this.timeoutMs} ms; try again shortly.`);
      case NatsErrorCode.MaxPayloadExceeded:
        return new DomainError(ErrorCode.PayloadTooLarge, `Request exceeds the ${this.maxPayload} byte limit.`);
      default:
        return toDomainError(err, service);
    }
  }
}

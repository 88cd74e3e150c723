import { DomainError, ErrorCode, traceparentOf } from '@crm/common';
import { rpcSubject, RpcRequest } from '@crm/contracts';
import { ClientNats, NatsOptions, PacketId, ReadPacket, WritePacket } from '@nestjs/microservices';
import { createInbox, headers as natsHeaders, ErrorCode as NatsErrorCode, Msg, MsgHdrs, NatsConnection, NatsError, Subscription } from 'nats';
import { CompressingSerializer, InflatedTooLarge, InflatingResponseDeserializer } from './compressed-messages';
import { readSplitReply, splitReplyId } from './split-replies';
import { NatsUser } from '../nats';
import { catchError, defer, mergeMap, Observable, throwError } from 'rxjs';
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

export interface CrmNatsClientOptions extends NatsUser {
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
 * request over the broker's payload limit, 501 for an operation the running service lacks, or 500 for an
 * answer that would inflate past the cap (compressed-messages.ts).
 *
 * Requests share one reply subscription (`<inbox>.*`, a token per request) instead of Nest's
 * subscribe-and-unsubscribe of an inbox per request. It is ours rather than nats.js's request(), which
 * builds a discarded Error with a stack trace for every request it completes.
 */
export class CrmNatsClient extends ClientNats {
  private readonly namespace: string;
  /** The longest any request waits (RPC_TIMEOUT_MS); one that names a shorter wait (`ctx.timeout_ms`) waits that long. */
  readonly timeoutMs: number;
  private replies?: ReplyInbox;

  constructor({ namespace, timeoutMs, ...connection }: CrmNatsClientOptions) {
    // noAsyncTraces: nats.js would otherwise capture two stack traces per request, only to label a timeout.
    super({
      ...connection,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      pingInterval: 10_000,
      noAsyncTraces: true,
      serializer: new CompressingSerializer(),
      deserializer: new InflatingResponseDeserializer(),
    } as NonNullable<NatsOptions['options']>);
    this.namespace = namespace;
    this.timeoutMs = timeoutMs;
  }

  /** Largest message the broker accepts, once connected. */
  get maxPayload(): number {
    return this.natsClient?.info?.max_payload ?? 1024 * 1024;
  }

  override send<TResult = unknown, TInput = unknown>(pattern: string, data: TInput): Observable<TResult> {
    return this.asDomainErrors(pattern, this.waitFor(data), super.send<TResult, TInput>(pattern, data));
  }

  /**
   * `send`, for a caller that hands the reply on unchanged: a successful reply in the split layout
   * arrives as RawJson, unparsed. Anything else (an error, an older service's reply) arrives as `send` gives it.
   */
  sendPassingThrough(pattern: string, data: object): Observable<unknown> {
    // Nest's send, with the reply read raw.
    const reply = defer(() => this.connect()).pipe(
      mergeMap(() => new Observable((observer) => this.publishReading({ pattern, data }, this.createObserver(observer), true))),
    );
    return this.asDomainErrors(pattern, this.waitFor(data), reply);
  }

  private asDomainErrors<T>(pattern: string, waitMs: number, reply: Observable<T>): Observable<T> {
    const service = pattern.split('.')[0];
    return reply.pipe(catchError((err: unknown) => throwError(() => this.failure(err, service, waitMs))));
  }

  /** How long a request waits for its answer: as long as it says its caller waits, never past RPC_TIMEOUT_MS. */
  private waitFor(data: unknown): number {
    const named = (data as Partial<RpcRequest> | undefined)?.ctx?.timeout_ms;
    return typeof named === 'number' && named > 0 ? Math.min(named, this.timeoutMs) : this.timeoutMs;
  }

  protected override normalizePattern(pattern: string): string {
    return rpcSubject(this.namespace, super.normalizePattern(pattern));
  }

  /** Every request reads its reply in the split layout, and says so in its id; a service of an older build answers in Nest's envelope. */
  protected override assignPacketId(packet: ReadPacket): ReadPacket & PacketId {
    const assigned = super.assignPacketId(packet);
    assigned.id = splitReplyId(assigned.id);
    return assigned;
  }

  protected override publish(partialPacket: ReadPacket, callback: (packet: WritePacket) => unknown): () => void {
    return this.publishReading(partialPacket, callback, false);
  }

  private publishReading(partialPacket: ReadPacket, callback: (packet: WritePacket) => unknown, raw: boolean): () => void {
    let token: string | undefined;
    let replies: ReplyInbox | undefined;
    try {
      const packet = this.assignPacketId(partialPacket);
      const { data, headers } = this.serializer.serialize(packet) as { data: Uint8Array; headers?: MsgHdrs };
      replies = this.replyInbox();
      token = replies.expect(
        (_err, msg) => this.answer(packet, msg, raw, callback),
        (err) => callback({ err, isDisposed: true }),
        this.waitFor(packet.data),
      );
      this.natsClient!.publish(this.normalizePattern(packet.pattern), data, {
        reply: replies.subject(token),
        headers: withTraceparent(this.mergeHeaders(headers)),
      });
    } catch (err) {
      if (token) replies?.forget(token);
      callback({ err, isDisposed: true });
    }
    return () => {
      if (token) replies?.forget(token);
    };
  }

  /** A reply in the split layout is read here (its subject's token names the request); one in Nest's envelope as Nest reads it. */
  private answer(packet: ReadPacket & PacketId, msg: Msg, raw: boolean, callback: (packet: WritePacket) => unknown): unknown {
    let split: ReturnType<typeof readSplitReply>;
    try {
      split = readSplitReply(msg.data, raw);
    } catch (err) {
      return callback({ err, isDisposed: true });
    }
    if (!split) return this.createSubscriptionHandler(packet, callback)(undefined, msg);
    return callback({ response: split.response, isDisposed: true });
  }

  override async close(): Promise<void> {
    this.replies?.failAll(new NatsError('connection closed', NatsErrorCode.ConnectionClosed));
    this.replies = undefined;
    await super.close();
  }

  /** The reply subscription of the current connection (a new one if Nest has reconnected from scratch). */
  private replyInbox(): ReplyInbox {
    const connection = this.natsClient as unknown as NatsConnection;
    if (this.replies?.connection !== connection || this.replies.closed) {
      this.replies?.failAll(new NatsError('connection replaced', NatsErrorCode.ConnectionClosed));
      this.replies = new ReplyInbox(connection);
    }
    return this.replies;
  }

  private failure(err: unknown, service: string, waitMs: number): DomainError {
    if (err instanceof InflatedTooLarge)
      return new DomainError(ErrorCode.Internal, `The ${service} service answered with a message larger than any valid answer.`);
    switch ((err as NatsError | undefined)?.code) {
      case NatsErrorCode.NoResponders:
        return serviceUnavailable(`The ${service} service is not available; try again shortly.`);
      case NatsErrorCode.Timeout:
        return serviceUnavailable(`The ${service} service did not answer within ${waitMs} ms; try again shortly.`);
      case NatsErrorCode.MaxPayloadExceeded:
        return new DomainError(ErrorCode.PayloadTooLarge, `Request exceeds the ${this.maxPayload} byte limit.`);
      default:
        return toDomainError(err, service);
    }
  }
}

type ReplyHandler = (err: undefined, msg: Msg) => unknown;

interface Pending {
  answer: ReplyHandler;
  fail: (err: NatsError) => void;
  timer: NodeJS.Timeout;
}

/**
 * One subscription receiving the replies to every request of a connection, each addressed to
 * `<inbox>.<token>`. A reply with no data and status 503 is the server saying nobody subscribes to
 * the request's subject (the client announces header support, so the server sends it).
 */
class ReplyInbox {
  private readonly prefix = `${createInbox()}.`;
  private readonly pending = new Map<string, Pending>();
  private readonly subscription: Subscription;
  private next = 0;
  /** Set once the subscription has failed or been given up; the client then opens a new inbox. */
  closed = false;

  constructor(readonly connection: NatsConnection) {
    this.subscription = connection.subscribe(`${this.prefix}*`, { callback: (err, msg) => (err ? this.failAll(err) : this.settle(msg)) });
  }

  subject(token: string): string {
    return this.prefix + token;
  }

  expect(answer: ReplyHandler, fail: (err: NatsError) => void, timeoutMs: number): string {
    const token = (this.next++).toString(36);
    const timer = setTimeout(() => {
      this.pending.delete(token);
      fail(new NatsError('timeout', NatsErrorCode.Timeout));
    }, timeoutMs);
    this.pending.set(token, { answer, fail, timer });
    return token;
  }

  forget(token: string): void {
    const request = this.pending.get(token);
    if (!request) return;
    clearTimeout(request.timer);
    this.pending.delete(token);
  }

  failAll(err: NatsError): void {
    this.closed = true;
    for (const [token, request] of this.pending) {
      this.forget(token);
      request.fail(err);
    }
    if (this.connection.isClosed()) return;
    this.subscription.unsubscribe();
  }

  private settle(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length);
    const request = this.pending.get(token);
    if (!request) return;
    this.forget(token);
    if (msg.data.length === 0 && msg.headers?.code === 503) request.fail(new NatsError('no responders', NatsErrorCode.NoResponders));
    else request.answer(undefined, msg);
  }
}

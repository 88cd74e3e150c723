import { ErrorCode, Logger } from '@crm/common';
import { CompressingSerializer, InflatedTooLarge, InflatingRequestDeserializer } from './compressed-messages';
import { rpcQueueGroup, rpcServiceWildcard, RpcServiceName } from '@crm/contracts';
import { NatsOptions, ServerNats } from '@nestjs/microservices';
import { ErrorCode as NatsErrorCode, Msg, NatsConnection, NatsError, Subscription } from 'nats';
import { splitReply, wantsSplitReply } from './split-replies';
import { NatsUser } from '../nats';

export interface CrmNatsServerOptions extends NatsUser {
  servers: string;
  namespace: string;
  service: RpcServiceName;
  logger: Logger;
  /** How long close() waits for in-flight requests; keep it under the orchestrator's grace period. */
  drainGraceMs?: number;
}

type Packet = { id?: string; err?: unknown; status?: string; isDisposed?: boolean; response?: unknown };

const TOO_LARGE = { code: ErrorCode.Internal, message: 'The response is too large; ask for a smaller page.' };

/**
 * NestJS's NATS server, adapted to our deployments:
 * - one subscription per service on `<namespace>.rpc.<service>.>` in the queue group `<namespace>.<service>`,
 *   so replicas share the work and an operation this build lacks is answered 501 by Nest's "no handler"
 *   reply rather than passing as a missing service;
 * - messages over 64 KiB travel gzip-compressed (compressed-messages.ts), and a reply still over the
 *   broker's payload limit is replaced by an error instead of being lost; a request that would inflate
 *   past the cap is answered 413 payload_too_large without being read;
 * - a successful reply to a caller that asks for it travels in the split layout (split-replies.ts): the
 *   response's JSON alone, without Nest's envelope;
 * - close() drains: it stops taking requests, lets the ones in flight answer, then disconnects. The
 *   service closes its database only after that.
 */
export class CrmNatsServer extends ServerNats {
  private readonly prefix: string;
  private subscription?: Subscription;
  private readonly inFlight = new Set<Msg>();
  private idle?: () => void;

  constructor(private readonly settings: CrmNatsServerOptions) {
    super({
      servers: settings.servers,
      user: settings.user,
      pass: settings.pass,
      name: `crm-${settings.service}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      serializer: new CompressingSerializer(),
      deserializer: new InflatingRequestDeserializer(),
    } as NonNullable<NatsOptions['options']>);
    this.prefix = `${settings.namespace}.rpc.`;
  }

  override bindEvents(client: NatsConnection): void {
    const { namespace, service } = this.settings;
    this.subscription = client.subscribe(rpcServiceWildcard(namespace, service), {
      queue: rpcQueueGroup(namespace, service),
      callback: (err, msg) => {
        if (err) {
          this.settings.logger.error({ err }, 'rpc subscription error');
          return;
        }
        if (msg.reply) this.inFlight.add(msg);
        this.handleMessage(msg.subject.slice(this.prefix.length), msg).catch((error: unknown) => {
          if (error instanceof InflatedTooLarge) this.refuseOversized(msg, error);
          else this.settings.logger.error({ err: error, rpc: msg.subject }, 'rpc message could not be handled');
          this.finished(msg);
        });
      },
    });
  }

  override getPublisher(natsMsg: Msg, id: string, ctx: Parameters<ServerNats['getPublisher']>[2]) {
    const publish = super.getPublisher(natsMsg, id, ctx);
    const split = natsMsg.reply !== undefined && wantsSplitReply(id);
    return (packet: Packet) => {
      try {
        // A handler's one answer arrives as a single packet that is also the last (see Nest's Server.send).
        if (split && packet.err === undefined && packet.isDisposed && 'response' in packet) {
          const data = splitReply(packet.response);
          this.onProcessingEndHook?.(this.transportId!, ctx);
          return natsMsg.respond(data);
        }
        return publish(packet);
      } catch (err) {
        if ((err as NatsError).code !== NatsErrorCode.MaxPayloadExceeded) throw err;
        this.settings.logger.error({ rpc: natsMsg.subject, request_id: id }, 'rpc reply exceeds the broker payload limit');
        return publish({ err: TOO_LARGE, isDisposed: true });
      } finally {
        if (packet.isDisposed || packet.err !== undefined) this.finished(natsMsg);
      }
    };
  }

  /**
   * Our patterns are plain dotted names. Nest first tries each incoming subject as JSON, which throws, and
   * builds a stack trace, for every message that is not; a name goes straight to the handler lookup.
   */
  override getRouteFromPattern(pattern: string): string {
    return this.normalizePattern(pattern);
  }

  /** False once the broker has stopped routing requests here (drain has begun and its unsubscribe is done). */
  get accepting(): boolean {
    return this.subscription !== undefined;
  }

  /** Stops taking requests and waits (up to `drainGraceMs`, 20 s by default) for the ones in flight to be answered. */
  async drain(graceMs = this.settings.drainGraceMs ?? 20_000): Promise<void> {
    const subscription = this.subscription;
    if (!subscription) return;
    // A subscription drain, not a bare unsubscribe: requests the broker routed here before it processed
    // the unsubscribe are still handled instead of being dropped to time out at the caller.
    await subscription.drain().catch(() => undefined);
    this.subscription = undefined;
    if (this.inFlight.size === 0) return;
    this.settings.logger.info({ in_flight: this.inFlight.size }, 'waiting for in-flight requests before shutdown');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (this.idle = resolve)), new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
  }

  override async close(): Promise<void> {
    await this.drain();
    await super.close();
  }

  /**
   * A request that would inflate past the cap is none a valid caller sends. It is answered with an error in
   * our shape, without Nest's id (which is inside the refused bytes; the caller matches the reply by its
   * subject), and logged without its payload.
   */
  private refuseOversized(msg: Msg, error: InflatedTooLarge): void {
    this.settings.logger.warn({ rpc: msg.subject, bytes: msg.data.length }, 'refused an rpc request that inflates past the limit');
    if (!msg.reply) return;
    msg.respond(Buffer.from(JSON.stringify({ err: { code: ErrorCode.PayloadTooLarge, message: error.message }, isDisposed: true })));
  }

  private finished(msg: Msg): void {
    this.inFlight.delete(msg);
    if (this.inFlight.size === 0) this.idle?.();
  }
}

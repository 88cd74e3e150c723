import { DomainError, ErrorCode, Logger } from '@crm/common';
import { healthRpc, rpcQueueGroup, rpcServiceWildcard, RpcReply, RpcRequest, RpcServiceName } from '@crm/contracts';
import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown, SetMetadata } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Msg, NatsConnection, Subscription } from 'nats';
import { MESSAGING_OPTIONS, MessagingOptions } from './messaging.options';
import { decodeJson, encodeJson, NATS_CONNECTION } from './nats';

const RPC_HANDLER = 'crm:rpc-handler';

/** Marks a provider method as the handler of one request name, e.g. `@RpcHandler(ContactsRpc.Create)`. */
export const RpcHandler = (name: string): MethodDecorator => SetMetadata(RPC_HANDLER, name);

type Handler = (request: RpcRequest) => Promise<unknown> | unknown;

/**
 * Answers this service's requests. One subscription per service on `<ns>.rpc.<service>.>` in a queue
 * group, so replicas share the load; handlers are found through their @RpcHandler decorators.
 */
@Injectable()
export class RpcServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly handlers = new Map<string, Handler>();
  private subscription?: Subscription;
  private readonly prefix: string;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions,
  ) {
    this.prefix = `${options.namespace}.rpc.`;
  }

  private get logger(): Logger {
    return this.options.logger;
  }

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const proto = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(proto)) {
        const name = this.reflector.get<string | undefined>(RPC_HANDLER, proto[method]);
        if (!name) continue;
        if (this.handlers.has(name)) throw new Error(`Two handlers for ${name}`);
        this.handlers.set(name, (instance[method] as Handler).bind(instance));
      }
    }
    const service = this.options.service as RpcServiceName;
    this.handlers.set(healthRpc(service), () => ({ status: 'up', service }));
    this.subscription = this.nc.subscribe(rpcServiceWildcard(this.options.namespace, service), {
      queue: rpcQueueGroup(this.options.namespace, service),
      callback: (err, msg) => {
        if (err) {
          this.logger.error({ err }, 'rpc subscription error');
          return;
        }
        void this.answer(msg);
      },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }

  private async answer(msg: Msg): Promise<void> {
    const name = msg.subject.slice(this.prefix.length);
    let reply: RpcReply;
    let request: RpcRequest | undefined;
    const started = process.hrtime.bigint();
    try {
      request = decodeJson<RpcRequest>(msg.data);
      const handler = this.handlers.get(name);
      if (!handler) throw new DomainError(ErrorCode.NotImplemented, 'This operation is not implemented yet.');
      reply = { ok: true, body: await handler(request) };
    } catch (err) {
      if (err instanceof DomainError) {
        reply = { ok: false, error: err.toBody() };
      } else {
        this.logger.error({ err, rpc: name, request_id: request?.ctx?.request_id }, 'unhandled error in rpc handler');
        reply = { ok: false, error: { code: ErrorCode.Internal, message: 'An internal error occurred.' } };
      }
    }
    let payload = encodeJson(reply);
    if (payload.byteLength > (this.nc.info?.max_payload ?? Infinity)) {
      this.logger.error({ rpc: name, bytes: payload.byteLength }, 'rpc reply exceeds the broker payload limit');
      payload = encodeJson({ ok: false, error: { code: ErrorCode.Internal, message: 'The response is too large; ask for a smaller page.' } });
    }
    if (msg.reply) msg.respond(payload);
    this.logger.debug(
      { rpc: name, request_id: request?.ctx?.request_id, ok: reply.ok, ms: Number(process.hrtime.bigint() - started) / 1e6 },
      'rpc handled',
    );
  }
}

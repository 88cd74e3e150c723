import { Logger } from '@crm/common';
import { eventSubject, EventType, keyRevocationSubject } from '@crm/contracts';
import { NATS_CONNECTION } from '@crm/messaging';
import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { JSONCodec, NatsConnection, Subscription } from 'nats';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { LOGGER } from '../tokens';
import { ApiKeyVerifier } from './api-key.verifier';

const codec = JSONCodec<{ key_id?: unknown; data?: { key_id?: unknown } }>();

/** Tells every running gateway that a key was revoked; resolves once the broker has the notice. */
export async function publishKeyRevocation(nc: NatsConnection, namespace: string, keyId: string): Promise<void> {
  nc.publish(keyRevocationSubject(namespace), codec.encode({ key_id: keyId }));
  await nc.flush();
}

/**
 * Keeps every gateway replica's memory of verified keys true to revocations. The replica that revokes a
 * key forgets it at once and tells the others on `<namespace>.gateway.apikeys.revoked` before it
 * answers (the command-line tool does the same); every replica also listens to the `api_key.revoked`
 * event, in case a notice was lost. A replica that loses its NATS connection forgets every key, since it may have
 * missed a notice.
 */
@Injectable()
export class KeyRevocations implements OnModuleInit, OnModuleDestroy {
  private readonly subscriptions: Subscription[] = [];
  private readonly namespace: string;
  private readonly subject: string;
  private readonly eventSubject: string;
  private watching = true;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly verifier: ApiKeyVerifier,
    @Inject(GATEWAY_CONFIG) config: Pick<GatewayConfig, 'namespace'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.namespace = config.namespace;
    this.subject = keyRevocationSubject(config.namespace);
    this.eventSubject = eventSubject(config.namespace, EventType.ApiKeyRevoked);
  }

  onModuleInit(): void {
    for (const subject of [this.subject, this.eventSubject]) {
      this.subscriptions.push(
        this.nc.subscribe(subject, {
          callback: (err, msg) => {
            if (err) return;
            try {
              const notice = codec.decode(msg.data);
              const keyId = notice.key_id ?? notice.data?.key_id;
              if (typeof keyId === 'string') this.verifier.forget(keyId);
            } catch {
              this.logger.warn({ subject: msg.subject }, 'ignored an unreadable key revocation notice');
            }
          },
        }),
      );
    }
    void this.watchConnection();
  }

  onModuleDestroy(): void {
    this.watching = false;
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /** Forgets the key here and tells the other replicas; resolves once the broker has the notice. */
  async announce(keyId: string): Promise<void> {
    this.verifier.forget(keyId);
    try {
      await publishKeyRevocation(this.nc, this.namespace, keyId);
    } catch (err) {
      // The others still hear of it through the api_key.revoked event, or forget everything on reconnect.
      this.logger.warn({ err: (err as Error).message, key_id: keyId }, 'could not announce a key revocation');
    }
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (!this.watching) return;
      if (status.type === 'disconnect' || status.type === 'reconnect') this.verifier.forgetAll();
    }
  }
}

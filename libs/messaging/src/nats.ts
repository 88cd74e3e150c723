import { BaseConfig, StartupError } from '@crm/common';
import { connect, NatsConnection } from 'nats';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

/** A process's NATS user and password, as the client's connection options; empty without NATS_USER. */
export interface NatsUser {
  user?: string;
  pass?: string;
}

export function natsUser(config: Pick<BaseConfig, 'natsUser' | 'natsPassword'>): NatsUser {
  return config.natsUser === undefined ? {} : { user: config.natsUser, pass: config.natsPassword };
}

/** Connects once at start-up (failing with one clear line), then reconnects for ever while running. */
export async function connectNats(url: string, name: string, user: NatsUser = {}): Promise<NatsConnection> {
  try {
    return await connect({
      ...user,
      servers: url,
      name,
      timeout: 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      pingInterval: 10_000,
      // nats.js would otherwise build two stack traces per request (a JetStream publish, a confirmed ack)
      // only to label a timeout that rarely comes.
      noAsyncTraces: true,
    });
  } catch (err) {
    throw new StartupError(`NATS at ${url} is unreachable: ${(err as Error).message}`);
  }
}

/** Sends and parses JSON; one place decides the wire format. */
export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decodeJson<T>(data: Uint8Array): T {
  return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as T;
}

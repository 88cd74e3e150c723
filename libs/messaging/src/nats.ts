import { BaseConfig, StartupError } from '@crm/common';
import { connect, ConnectionOptions, NatsConnection } from 'nats';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

/** A process's NATS user and password, as the client's connection options; empty without NATS_USER. */
export interface NatsUser {
  user?: string;
  pass?: string;
}

export function natsUser(config: Pick<BaseConfig, 'natsUser' | 'natsPassword'>): NatsUser {
  return config.natsUser === undefined ? {} : { user: config.natsUser, pass: config.natsPassword };
}

/** What every connection of a process shares: servers, name, user, timeouts. */
function connectionOptions(url: string, name: string, user: NatsUser): ConnectionOptions {
  return {
    ...user,
    servers: url,
    name,
    timeout: 5000,
    pingInterval: 10_000,
    // nats.js would otherwise build two stack traces per request (a JetStream publish, a confirmed ack)
    // only to label a timeout that rarely comes.
    noAsyncTraces: true,
  };
}

/** Connects once at start-up (failing with one clear line), then reconnects for ever while running. */
export async function connectNats(url: string, name: string, user: NatsUser = {}): Promise<NatsConnection> {
  try {
    return await connect({ ...connectionOptions(url, name, user), maxReconnectAttempts: -1, reconnectTimeWait: 500 });
  } catch (err) {
    throw new StartupError(`NATS at ${url} is unreachable: ${(err as Error).message}`);
  }
}

/**
 * A connection that never reconnects: it closes at its first disconnect, failing whatever is unanswered,
 * so everything it sent travelled over one socket. nats.js (2.29.3) discards, rather than resends, what
 * such a connection had not written when it closed; the outbox relay depends on it (docs/events.md,
 * "The relay").
 */
export function connectNatsOnce(url: string, name: string, user: NatsUser = {}): Promise<NatsConnection> {
  return connect({ ...connectionOptions(url, name, user), reconnect: false });
}

/** Sends and parses JSON; one place decides the wire format. */
export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decodeJson<T>(data: Uint8Array): T {
  return JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as T;
}

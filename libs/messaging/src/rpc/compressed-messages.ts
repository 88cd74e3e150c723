// Nest's own codecs of the NATS transport, which its package root does not re-export.
import { NatsRequestJSONDeserializer } from '@nestjs/microservices/deserializers/nats-request-json.deserializer';
import { NatsResponseJSONDeserializer } from '@nestjs/microservices/deserializers/nats-response-json.deserializer';
import { NatsRecordSerializer } from '@nestjs/microservices/serializers/nats-record.serializer';
import { BatchLimits } from '@crm/contracts';
import { gunzipSync, gzipSync } from 'zlib';

/**
 * Requests and replies larger than this travel gzip-compressed. A batch write of 200 records or a page of
 * large records is JSON that compresses several-fold, so it fits the broker's payload limit (1 MiB by
 * default) where its plain form would not; small messages, nearly all of them, are left as they are.
 */
export const COMPRESS_ABOVE_BYTES = 64 * 1024;

/** A message's bytes as they travel: gzip-compressed over COMPRESS_ABOVE_BYTES, as they are below. */
export function compressed(value: Uint8Array): Uint8Array {
  // Level 1: a few milliseconds for a megabyte, most of the size gain of the slower levels.
  return value.length > COMPRESS_ABOVE_BYTES ? gzipSync(value, { level: 1 }) : value;
}

/**
 * The most a compressed message may inflate to. The largest message a valid request makes is a batch
 * write, its body at most BatchLimits.bodyBytes, or the answer to one: the same records with ids and
 * timestamps added. Twice that leaves room for the envelope and for JSON written longer than it was read.
 * Without a cap, gzip's ratio of about 1000:1 lets one message under the broker's 1 MiB limit inflate to
 * about 1 GiB, more than a process's memory limit.
 */
export const INFLATED_MAX_BYTES = 2 * BatchLimits.bodyBytes;

/** A compressed message that would inflate past INFLATED_MAX_BYTES: no valid request or answer does. */
export class InflatedTooLarge extends Error {
  constructor() {
    super(`A compressed message may inflate to at most ${INFLATED_MAX_BYTES} bytes.`);
  }
}

/** A message's bytes as sent, whether they travelled compressed or not: JSON never starts with gzip's two magic bytes. */
export function inflated(value: Uint8Array): Uint8Array {
  if (value.length < 2 || value[0] !== 0x1f || value[1] !== 0x8b) return value;
  try {
    // zlib stops at the cap instead of allocating whatever the stream claims.
    return gunzipSync(value, { maxOutputLength: INFLATED_MAX_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new InflatedTooLarge();
    throw err;
  }
}

export class CompressingSerializer extends NatsRecordSerializer {
  override serialize(packet: Parameters<NatsRecordSerializer['serialize']>[0]) {
    const message = super.serialize(packet) as { data: Uint8Array; headers?: unknown };
    message.data = compressed(message.data);
    return message as ReturnType<NatsRecordSerializer['serialize']>;
  }
}

export class InflatingRequestDeserializer extends NatsRequestJSONDeserializer {
  override deserialize(value: Uint8Array, options?: Record<string, unknown>) {
    return super.deserialize(inflated(value), options);
  }
}

export class InflatingResponseDeserializer extends NatsResponseJSONDeserializer {
  override deserialize(value: Uint8Array, options?: Record<string, unknown>) {
    return super.deserialize(inflated(value), options);
  }
}

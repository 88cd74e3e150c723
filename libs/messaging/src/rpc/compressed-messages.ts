// Nest's own codecs of the NATS transport, which its package root does not re-export.
import { NatsRequestJSONDeserializer } from '@nestjs/microservices/deserializers/nats-request-json.deserializer';
import { NatsResponseJSONDeserializer } from '@nestjs/microservices/deserializers/nats-response-json.deserializer';
import { NatsRecordSerializer } from '@nestjs/microservices/serializers/nats-record.serializer';
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

/** A message's bytes as sent, whether they travelled compressed or not: JSON never starts with gzip's two magic bytes. */
export function inflated(value: Uint8Array): Uint8Array {
  return value.length > 1 && value[0] === 0x1f && value[1] === 0x8b ? gunzipSync(value) : value;
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

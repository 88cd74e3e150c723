import { compressed, inflated } from './compressed-messages';

/**
 * A reply kept as the JSON the service sent, for a caller that hands it on unchanged: the gateway's
 * forwarded routes write it to the HTTP response as it is. Parsing a reply only to serialise it again
 * costs CPU and garbage in proportion to its size, which for a page of 200 events is most of what the
 * gateway does for the request.
 */
export class RawJson {
  /**
   * A string rather than the message's bytes, so the reply lives in V8's heap, where the collector
   * accounts for it; a Buffer's memory outside the heap is freed only when a collection finds its handle.
   */
  constructor(readonly json: string) {}
}

/**
 * Request ids of a caller that reads replies in the split layout start with this. The mark travels in
 * Nest's own envelope rather than in NATS headers: headers would be encoded and parsed on every request
 * and reply, which costs more than a small reply's JSON does.
 */
const SPLIT_ID_PREFIX = 's.';
/** First byte of a reply in the split layout. JSON never starts with it, Nest's envelope is JSON, gzip starts with 0x1f. */
const SPLIT_MARK = 0x00;

export function splitReplyId(id: string): string {
  return SPLIT_ID_PREFIX + id;
}

/** Whether the caller of request `id` reads replies in the split layout (an older build's caller does not). */
export function wantsSplitReply(id: string): boolean {
  return id.startsWith(SPLIT_ID_PREFIX);
}

/**
 * A successful reply in the split layout: the mark, then the response's JSON alone (nothing for no
 * response), without Nest's envelope, whose request id the caller already knows from the reply subject.
 * Gzip-compressed over COMPRESS_ABOVE_BYTES like every other message. Errors keep Nest's envelope.
 */
export function splitReply(response: unknown): Uint8Array {
  const json = response instanceof RawJson ? response.json : response === undefined ? '' : JSON.stringify(response);
  const framed = Buffer.allocUnsafe(Buffer.byteLength(json) + 1);
  framed[0] = SPLIT_MARK;
  framed.write(json, 1);
  return compressed(framed);
}

/**
 * Reads a reply in the split layout: the response, parsed or, for `raw`, as RawJson. Undefined for a
 * reply in Nest's envelope (an error, or a service of an older build), which the caller reads as Nest does.
 */
export function readSplitReply(data: Uint8Array, raw: boolean): { response: unknown } | undefined {
  const body = inflated(data);
  if (body.length === 0 || body[0] !== SPLIT_MARK) return undefined;
  if (body.length === 1) return { response: undefined };
  const json = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8', 1);
  return { response: raw ? new RawJson(json) : JSON.parse(json) };
}

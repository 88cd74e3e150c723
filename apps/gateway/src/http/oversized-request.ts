import { STATUS_CODES } from 'http';
import type { Duplex } from 'stream';
import { ErrorCode } from '@crm/common';

/** The request line's share of Node's 16 KiB header limit beyond which the URL is what is too long. */
const LONG_REQUEST_LINE = 8 * 1024;

/**
 * Node answers a request whose line and headers overflow its 16 KiB limit, or that is not HTTP at all,
 * with an empty response of its own (Fastify's would be in its own shape) before any hook runs. This,
 * Fastify's `clientErrorHandler`, answers them in the API's error shape instead: 414 when the URL is
 * what is too long, 431 for headers, 400 for malformed HTTP.
 */
export function answerClientError(err: Error & { code?: string; rawPacket?: unknown }, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  let status = 400;
  let message = 'The request is not valid HTTP/1.1.';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    const lineEnd = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.indexOf('\r\n') : -1;
    const urlTooLong = lineEnd === -1 || lineEnd > LONG_REQUEST_LINE;
    status = urlTooLong ? 414 : 431;
    message = urlTooLong
      ? 'The URL is too long: the request line and headers must fit in 16 KiB. Send fewer or shorter query parameters.'
      : 'The request headers are too large: the request line and headers must fit in 16 KiB.';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = 'The request was not received in time.';
  }
  const body = JSON.stringify({ error: { code: ErrorCode.InvalidRequest, message } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

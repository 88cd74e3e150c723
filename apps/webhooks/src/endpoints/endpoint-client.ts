import { LookupAddress, lookup as dnsLookup } from 'dns';
import { Agent as HttpAgent, ClientRequest, request as httpRequest, IncomingMessage, RequestOptions } from 'http';
import { Agent as HttpsAgent, request as httpsRequest } from 'https';
import { isIP, LookupFunction } from 'net';
import { bareHost, isPublicAddress } from './address-policy';

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** Aborts the request (service shutdown). */
  signal?: AbortSignal;
}

export interface SendResult {
  ok: boolean;
  /** null when no HTTP answer arrived. */
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
}

class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

function refusal(host: string, address: string): RefusedAddressError {
  return new RefusedAddressError(`refused to connect to ${host} (${address}): private, loopback and link-local addresses are not allowed`);
}

/**
 * Resolves like the system resolver, then drops non-public addresses. The socket connects to the
 * address returned here, so a DNS answer that changes between check and connect cannot slip through.
 */
function publicOnlyLookup(): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number; hints?: number }, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err);
      const allowed = addresses.filter((a) => isPublicAddress(a.address));
      if (!allowed.length) return callback(refusal(hostname, addresses[0]?.address ?? 'no address'));
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0].address, allowed[0].family);
    });
  }) as LookupFunction;
}

function describe(err: NodeJS.ErrnoException, timeoutMs: number): string {
  if (err instanceof RefusedAddressError) return err.message;
  switch (err.code) {
    case 'ETIMEDOUT_DELIVERY':
      return `timed out after ${timeoutMs} ms`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the endpoint';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'could not resolve the endpoint host name';
    case 'ABORT_ERR':
      return 'delivery interrupted: the service is shutting down';
    default:
      return err.code ? `${err.code}: ${err.message}` : err.message;
  }
}

/**
 * Connections are kept open between deliveries: a subscription's events go out one after another to the
 * same endpoint, and a new connection (with a TLS handshake for https) per event cost more than the
 * request. An idle connection is closed after FREE_SOCKET_MS, or sooner when the endpoint's Keep-Alive
 * header says it closes sooner (Node's agent reads the hint).
 */
const FREE_SOCKET_MS = 4000;
const agents = {
  http: new HttpAgent({ keepAlive: true, timeout: FREE_SOCKET_MS }),
  https: new HttpsAgent({ keepAlive: true, timeout: FREE_SOCKET_MS }),
};

/** An endpoint may close an idle connection just as a request is written to it: that request never reached it. */
function lostOnReusedConnection(req: ClientRequest, err: NodeJS.ErrnoException): boolean {
  return req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'socket hang up');
}

/**
 * POSTs a body and reports what happened; never throws. Redirects are not followed (a 3xx is a
 * failure): following one would let an endpoint point deliveries at an address nobody checked.
 */
export function postJson(target: string, body: string, headers: Record<string, string>, options: SendOptions): Promise<SendResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ ...result, durationMs: elapsed() });
    };
    const fail = (err: NodeJS.ErrnoException) => finish({ ok: false, httpStatus: null, error: describe(err, options.timeoutMs) });

    let url: URL;
    try {
      url = new URL(target);
    } catch {
      fail(new Error('the subscription url is not a valid URL'));
      return;
    }
    const host = bareHost(url);
    if (!options.allowPrivate && isIP(host) && !isPublicAddress(host)) {
      fail(refusal(host, host));
      return;
    }
    const payload = Buffer.from(body, 'utf8');
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: { ...headers, 'content-length': String(payload.length) },
      agent: url.protocol === 'https:' ? agents.https : agents.http,
      ...(options.allowPrivate ? {} : { lookup: publicOnlyLookup() }),
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let req: ClientRequest;
    const attempt = () => {
      req = send(url, requestOptions, (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        // The answer's body is not kept; read it so the exchange completes, up to a bound.
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > 64 * 1024) res.destroy();
        });
        const done = () => finish({ ok, httpStatus: status, error: ok ? null : `endpoint answered HTTP ${status}` });
        res.on('end', done);
        res.on('close', done);
        res.on('error', done);
      });
      const sent = req;
      // Sent again on another connection: the failed one is destroyed, so this ends with the pool.
      sent.on('error', (err: NodeJS.ErrnoException) => (!settled && lostOnReusedConnection(sent, err) ? attempt() : fail(err)));
      sent.end(payload);
    };
    timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error('timeout');
      err.code = 'ETIMEDOUT_DELIVERY';
      fail(err);
      req.destroy();
    }, options.timeoutMs);
    function onAbort() {
      const err: NodeJS.ErrnoException = new Error('aborted');
      err.code = 'ABORT_ERR';
      fail(err);
      req?.destroy();
    }
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    attempt();
  });
}

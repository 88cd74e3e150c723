import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { Webhook } from 'standardwebhooks';
import { eventually } from './api-client';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; occurred_at: string; data: Record<string, unknown> };
  /** When it arrived (Date.now()). */
  receivedAt: number;
}

/** What to answer the n-th request (0-based): a status, or 'hang' to never answer. */
export type Responder = (request: ReceivedRequest, index: number) => number | 'hang';

/** A real HTTP endpoint on 127.0.0.1 that records every request it gets. */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly hanging: ServerResponse[] = [];
  respond: Responder;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    respond: Responder,
  ) {
    this.respond = respond;
  }

  static async start(respond: Responder = () => 200): Promise<Receiver> {
    let receiver!: Receiver;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const request: ReceivedRequest = { headers: req.headers, body, json: JSON.parse(body), receivedAt: Date.now() };
        const index = receiver.requests.push(request) - 1;
        const answer = receiver.respond(request, index);
        if (answer === 'hang') receiver.hanging.push(res);
        else res.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new Receiver(server, `http://127.0.0.1:${port}/hook`, respond);
    return receiver;
  }

  /** Event ids in the order they arrived (pings included). */
  ids(): string[] {
    return this.requests.map((r) => r.json.id);
  }

  received(type?: string): ReceivedRequest[] {
    return this.requests.filter((r) => !type || r.json.type === type);
  }

  /** Waits until at least `count` requests (of `type`, when given) arrived; `timeoutMs` as in `eventually`. */
  async waitFor(count: number, type?: string, timeoutMs?: number): Promise<ReceivedRequest[]> {
    return eventually(async () => {
      const got = this.received(type);
      return got.length >= count ? got : undefined;
    }, timeoutMs);
  }

  /** Waits for the delivery of the event carrying this API key id (events of other keys may arrive too). */
  async waitForKey(keyId: string, type = 'api_key.created', timeoutMs?: number): Promise<ReceivedRequest> {
    return eventually(async () => this.requests.find((r) => r.json.type === type && r.json.data.key_id === keyId), timeoutMs);
  }

  /** Key ids carried by the requests received, in arrival order, keeping only those in `keyIds`. */
  keysAmong(keyIds: string[]): string[] {
    return this.requests.map((r) => r.json.data?.key_id as string).filter((id) => keyIds.includes(id));
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** Verifies a request exactly as a receiver using the standardwebhooks library would; throws when it does not verify. */
export function verify(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

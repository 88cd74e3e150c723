import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Server, ServerResponse } from 'http';
import { Server as NetServer, Socket } from 'net';

/** A connection with no request for this long during a drain is closed; a busy client is never idle that long. */
const IDLE_CLOSE_MS = 500;

interface Connection {
  busy: number;
  idleSince: number;
}

/**
 * Graceful shutdown of the HTTP server under keep-alive load. Closing the listener alone is not enough:
 * clients on keep-alive connections go on sending requests on them, and the server would serve them
 * for as long as they keep coming. On drain():
 * - the listener closes, so no new connection is accepted;
 * - every response from then on, including those of requests already in flight, carries
 *   `Connection: close`, so each connection ends after its current request;
 * - a connection idle for IDLE_CLOSE_MS is closed. Not at once: a keep-alive client may be sending
 *   its next request on it right now, and cutting it would fail that request;
 * - after `graceMs` whatever is still open is closed, so the process exits within its grace period.
 */
export class HttpDrain {
  private draining = false;
  private readonly connections = new Map<Socket, Connection>();
  private readonly pending = new Set<ServerResponse>();

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { busy: 0, idleSince: Date.now() });
      socket.once('close', () => this.connections.delete(socket));
    });
  }

  /** An `onRequest` hook, added first: tracks requests in progress and marks their responses once draining. */
  readonly onRequest = (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const res = reply.raw;
    const connection = this.connections.get(req.raw.socket);
    if (connection) connection.busy++;
    this.pending.add(res);
    let ended = false;
    const finished = () => {
      if (ended) return;
      ended = true;
      this.pending.delete(res);
      if (connection) {
        connection.busy--;
        connection.idleSince = Date.now();
      }
    };
    res.once('finish', finished);
    res.once('close', finished);
    if (this.draining) res.setHeader('Connection', 'close');
    done();
  };

  /** Resolves when every connection has closed, or after `graceMs` with the rest cut. Returns how many were cut. */
  async drain(graceMs: number): Promise<number> {
    this.draining = true;
    for (const res of this.pending) if (!res.headersSent) res.setHeader('Connection', 'close');
    // The listener only: http.Server#close would also close idle keep-alive connections at once.
    const listenerClosed = new Promise<void>((resolve) => NetServer.prototype.close.call(this.server, () => resolve()));
    const deadline = Date.now() + graceMs;
    while (this.connections.size > 0 && Date.now() < deadline) {
      const now = Date.now();
      for (const [socket, c] of this.connections) if (c.busy === 0 && now - c.idleSince >= IDLE_CLOSE_MS) socket.destroy();
      await new Promise((r) => setTimeout(r, 50));
    }
    const cut = this.connections.size;
    this.server.closeAllConnections();
    await listenerClosed;
    // Lets http.Server release its own timers; the listener is already closed.
    this.server.close(() => undefined);
    return cut;
  }
}

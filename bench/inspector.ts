import { randomBytes } from 'crypto';
import { createWriteStream } from 'fs';
import { request } from 'http';
import { Socket } from 'net';

/**
 * A minimal client of the V8 inspector (Chrome DevTools Protocol over a WebSocket) for a process started
 * with `--inspect=127.0.0.1:<port>`. The benchmarks use it to run a full collection before reading a
 * heap, and to take heap snapshots, without any code in the services: a production process has no
 * debug hook, and the bench's processes listen for the inspector on loopback only.
 */
export class Inspector {
  private nextId = 0;
  private buffer = Buffer.alloc(0);
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private readonly listeners = new Map<string, (params: any) => void>();

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err) => this.failAll(err));
    socket.on('close', () => this.failAll(new Error('inspector connection closed')));
  }

  static async connect(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const url = new URL(targets[0].webSocketDebuggerUrl);
    const key = randomBytes(16).toString('base64');
    return new Promise((resolve, reject) => {
      const req = request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' },
      });
      req.on('upgrade', (res, socket, head) => {
        // Node's inspector answers with its own Sec-WebSocket-Accept; the upgrade itself is the proof here (loopback, our own process).
        if (res.headers.upgrade?.toLowerCase() !== 'websocket') return reject(new Error('inspector handshake failed'));
        const inspector = new Inspector(socket);
        if (head.length) inspector.receive(head);
        resolve(inspector);
      });
      req.on('response', (res) => reject(new Error(`inspector answered ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
  }

  send<T = any>(method: string, params: object = {}): Promise<T> {
    const id = ++this.nextId;
    const payload = Buffer.from(JSON.stringify({ id, method, params }));
    // A client's frames are masked (RFC 6455 5.3); one final text frame per message.
    const mask = randomBytes(4);
    const length = payload.length;
    let header: Buffer;
    if (length < 126) header = Buffer.from([0x81, 0x80 | length]);
    else if (length < 65536) {
      header = Buffer.from([0x81, 0x80 | 126, 0, 0]);
      header.writeUInt16BE(length, 2);
    } else {
      header = Buffer.alloc(10);
      header.set([0x81, 0x80 | 127]);
      header.writeBigUInt64BE(BigInt(length), 2);
    }
    for (let i = 0; i < length; i++) payload[i] ^= mask[i % 4];
    this.socket.write(Buffer.concat([header, mask, payload]));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  on(method: string, listener: (params: any) => void): void {
    this.listeners.set(method, listener);
  }

  close(): void {
    this.socket.end();
    this.socket.destroy();
  }

  /** Used heap after a full collection, and the heap V8 then keeps, in bytes. */
  async heapAfterGc(): Promise<{ used: number; total: number }> {
    await this.send('HeapProfiler.collectGarbage');
    const { usedSize, totalSize } = await this.send<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage');
    return { used: usedSize, total: totalSize };
  }

  /** Writes a heap snapshot (V8 collects garbage first, so it holds what is reachable) to `file`. */
  async heapSnapshot(file: string): Promise<void> {
    const out = createWriteStream(file);
    this.on('HeapProfiler.addHeapSnapshotChunk', ({ chunk }: { chunk: string }) => out.write(chunk));
    await this.send('HeapProfiler.enable');
    await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    await this.send('HeapProfiler.disable');
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return;
      let length = this.buffer[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.buffer.length < 4) return;
        length = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.buffer.length < 10) return;
        length = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (this.buffer.length < offset + length) return;
      const opcode = this.buffer[0] & 0x0f;
      const payload = this.buffer.subarray(offset, offset + length);
      this.buffer = this.buffer.subarray(offset + length);
      // The inspector sends each message as one unmasked text frame; nothing else is expected.
      if (opcode === 0x1) this.message(JSON.parse(payload.toString('utf8')));
    }
  }

  private message(msg: { id?: number; method?: string; params?: unknown; result?: unknown; error?: { message: string } }): void {
    if (msg.id !== undefined) {
      const waiter = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.error) waiter?.reject(new Error(msg.error.message));
      else waiter?.resolve(msg.result);
    } else if (msg.method) this.listeners.get(msg.method)?.(msg.params);
  }

  private failAll(err: Error): void {
    for (const waiter of this.pending.values()) waiter.reject(err);
    this.pending.clear();
  }
}

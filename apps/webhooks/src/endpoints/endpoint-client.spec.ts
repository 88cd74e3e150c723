import { createServer, Server } from 'http';
import { AddressInfo } from 'net';
import { postJson } from './endpoint-client';

describe('endpoint client', () => {
  let server: Server;
  let port: number;
  let hits = 0;
  let answer = 200;
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits++;
      req.resume();
      if (req.url === '/hang') return;
      if (req.url === '/redirect') {
        res.writeHead(302, { location: 'http://127.0.0.1/' }).end();
        return;
      }
      res.writeHead(answer).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    hits = 0;
    answer = 200;
  });

  const allowed = { timeoutMs: 2000, allowPrivate: true };

  it('reports a 2xx answer as success', async () => {
    const result = await postJson(`http://127.0.0.1:${port}/in`, '{}', {}, allowed);
    expect(result).toMatchObject({ ok: true, httpStatus: 200, error: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('reports a non-2xx answer, redirects included, as failure', async () => {
    answer = 500;
    expect(await postJson(`http://127.0.0.1:${port}/in`, '{}', {}, allowed)).toMatchObject({ ok: false, httpStatus: 500, error: 'endpoint answered HTTP 500' });
    expect(await postJson(`http://127.0.0.1:${port}/redirect`, '{}', {}, allowed)).toMatchObject({ ok: false, httpStatus: 302 });
    expect(hits).toBe(2);
  });

  it('gives up on an endpoint that does not answer in time', async () => {
    const result = await postJson(`http://127.0.0.1:${port}/hang`, '{}', {}, { ...allowed, timeoutMs: 200 });
    expect(result).toMatchObject({ ok: false, httpStatus: null, error: 'timed out after 200 ms' });
  });

  it('refuses loopback targets, by address or by name, without connecting', async () => {
    const strict = { timeoutMs: 2000, allowPrivate: false };
    const byAddress = await postJson(`http://127.0.0.1:${port}/in`, '{}', {}, strict);
    expect(byAddress).toMatchObject({ ok: false, httpStatus: null });
    expect(byAddress.error).toContain('private, loopback and link-local addresses are not allowed');
    const byName = await postJson(`http://localhost:${port}/in`, '{}', {}, strict);
    expect(byName).toMatchObject({ ok: false, httpStatus: null });
    expect(byName.error).toContain('refused to connect to localhost');
    expect(hits).toBe(0);
  });

  it('keeps the connection open for the next delivery to the same endpoint', async () => {
    const { url, connections, close } = await countingServer(() => 'answer');
    try {
      for (let i = 0; i < 3; i++) expect(await postJson(url, '{}', {}, allowed)).toMatchObject({ ok: true, httpStatus: 200 });
      expect(connections()).toBe(1);
    } finally {
      await close();
    }
  });

  it('sends again on a new connection when the endpoint dropped the kept one as the request went out', async () => {
    // Every second request on a connection is dropped unanswered: what an endpoint closing an idle connection looks like.
    const { url, connections, close } = await countingServer((requestOnConnection) => (requestOnConnection === 2 ? 'drop' : 'answer'));
    try {
      expect(await postJson(url, '{}', {}, allowed)).toMatchObject({ ok: true });
      expect(await postJson(url, '{}', {}, allowed)).toMatchObject({ ok: true, httpStatus: 200, error: null });
      expect(connections()).toBe(2);
    } finally {
      await close();
    }
  });

  it('reports a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await postJson(`http://127.0.0.1:${closedPort}/`, '{}', {}, allowed)).toMatchObject({ ok: false, httpStatus: null, error: 'connection refused' });
  });
});

/** An endpoint that counts its connections and answers, or drops, each request by its place on its connection. */
async function countingServer(decide: (requestOnConnection: number) => 'answer' | 'drop') {
  let connections = 0;
  const perSocket = new WeakMap<object, number>();
  const server = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    req.resume();
    if (decide(n) === 'drop') req.socket.destroy();
    else res.writeHead(200).end('ok');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`,
    connections: () => connections,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

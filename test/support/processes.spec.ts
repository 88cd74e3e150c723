import { createServer, Server } from 'net';
import { freePort, natsServerOn, onFreePort, postgresServerOn, redisServerOn } from './processes';

/**
 * The private servers of the fault tests start on another port when the one picked was taken before they
 * bound it: here the first port each is offered is already listened on, as another process on a busy machine
 * might have done between freePort's check and the server's start.
 */
describe('private servers on a port someone took first', () => {
  let taken: Server;
  let takenPort: number;
  beforeAll(async () => {
    takenPort = await freePort();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(takenPort, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  /** Offers the taken port first, then free ones; records what was offered. */
  const offers = () => {
    const offered: number[] = [];
    const pick = async () => {
      const port = offered.length === 0 ? takenPort : await freePort();
      offered.push(port);
      return port;
    };
    return { offered, pick };
  };

  it.each([
    ['nats-server', (port: number) => natsServerOn(port, {}), (s: { destroy(): Promise<void> }) => s.destroy()],
    ['redis-server', redisServerOn, (s: { stop(): Promise<void> }) => s.stop()],
    ['PostgreSQL', postgresServerOn, (s: { destroy(): Promise<void> }) => s.destroy()],
  ] as const)('%s starts on the next port offered', async (_, start, stop) => {
    const { offered, pick } = offers();
    const server = await onFreePort(start as (port: number) => Promise<never>, pick);
    try {
      expect(offered).toHaveLength(2);
      expect(offered[0]).toBe(takenPort);
      const url = (server as { url: string | ((db: string) => string) }).url;
      expect(typeof url === 'function' ? url('postgres') : url).toContain(`:${offered[1]}`);
    } finally {
      await (stop as (s: unknown) => Promise<void>)(server);
    }
  });
});

import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DEFAULT_DATABASE_URL } from './config';
import { dataSourceOptions, DEAD_PEER_SETTINGS, sessionConnection } from './database';

/**
 * A lock held by a process on a dead node is freed once PostgreSQL notices the dead peer: the connections
 * that hold locks ask for keepalives and a user timeout that notice it in about a minute, not the kernel's
 * two hours. (Killing a node is beyond a unit test; what the server was asked for is checked here.)
 */
const url = new globalThis.URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
url.pathname = '/postgres';
const URL = url.toString();
const SETTINGS = Object.keys(DEAD_PEER_SETTINGS);
const show = async (query: (sql: string) => Promise<Array<Record<string, string>>>) =>
  Object.fromEntries(await Promise.all(SETTINGS.map(async (name) => [name, Object.values((await query(`SHOW ${name}`))[0])[0]])));
const expected = { tcp_keepalives_idle: '20', tcp_keepalives_interval: '10', tcp_keepalives_count: '3', tcp_user_timeout: '50000' };

describe('dead peers on lock-holding connections', () => {
  it('gives up on a silent peer within about a minute', () => {
    const { tcp_keepalives_idle: idle, tcp_keepalives_interval: interval, tcp_keepalives_count: count, tcp_user_timeout: userTimeoutMs } = DEAD_PEER_SETTINGS;
    expect(idle + interval * count).toBeLessThanOrEqual(60);
    expect(userTimeoutMs).toBeLessThanOrEqual(60_000);
  });

  it('a dedicated connection (the webhooks intake lock, LISTEN) asks the server for them', async () => {
    const client = new Client(sessionConnection(URL));
    await client.connect();
    try {
      expect(await show(async (sql) => (await client.query(sql)).rows)).toEqual(expected);
    } finally {
      await client.end();
    }
  });

  it('every pooled connection of a process asks for them too, beside its search_path', async () => {
    const dataSource = new DataSource(dataSourceOptions({ url: URL, schema: 'public', entities: [], migrations: [] }));
    await dataSource.initialize();
    try {
      expect(await show((sql) => dataSource.query(sql))).toEqual(expected);
      expect((await dataSource.query('SHOW search_path'))[0].search_path).toBe('public,public');
    } finally {
      await dataSource.destroy();
    }
  });
});

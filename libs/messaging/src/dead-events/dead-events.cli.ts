import { DEFAULT_DATABASE_URL, Env, urlVar } from '@crm/common';
import { RPC_SERVICES } from '@crm/contracts';
import { Client } from 'pg';
import { parseArgs } from 'util';
import { listDeadEvents, Queryable, requestRetry } from './dead-event.store';

export const DEAD_EVENTS_USAGE = `usage:
  npm run dead-events -- list --service contacts|deals|events|webhooks [--consumer NAME]
  npm run dead-events -- retry --service contacts|deals|events|webhooks (--id ID ... | --consumer NAME | --all)`;

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * The operator's view of one service's dead events, straight in its database schema: `list` shows what
 * was parked and why, `retry` asks the running service to replay events (it does so within a second and
 * removes those that now succeed). Answers the exit code.
 */
export async function deadEventsCommand(argv: string[], env: Env, io: CliOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { service: { type: 'string' }, consumer: { type: 'string' }, id: { type: 'string', multiple: true }, all: { type: 'boolean' } },
    });
  } catch (err) {
    io.err(`dead-events: ${(err as Error).message}\n${DEAD_EVENTS_USAGE}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command] = positionals;
  const service = values.service ?? '';
  const ids = values.id ?? [];
  const usage = (problem: string) => {
    io.err(`dead-events: ${problem}\n${DEAD_EVENTS_USAGE}`);
    return 2;
  };
  if (command !== 'list' && command !== 'retry') return usage('the command is list or retry');
  if (!(RPC_SERVICES as readonly string[]).includes(service)) return usage(`--service must be one of ${RPC_SERVICES.join(', ')}`);
  if (ids.some((id) => !/^\d{1,18}$/.test(id))) return usage('--id takes the number list shows');
  if (command === 'retry' && !ids.length && !values.consumer && !values.all) return usage('retry needs --id, --consumer or --all');

  const client = new Client({ connectionString: urlVar(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgres', 'postgresql']) });
  await client.connect();
  try {
    await client.query(`SELECT set_config('search_path', $1, false)`, [service]);
    const db: Queryable = { query: async (sql, params) => (await client.query(sql, params as unknown[])).rows };
    if (command === 'list') {
      const dead = await listDeadEvents(db, { consumer: values.consumer });
      for (const d of dead) {
        const state = d.retryRequestedAt ? 'retry requested' : 'parked';
        io.out([d.id, d.consumer, d.event.id, d.event.type, `attempts=${d.attempts}`, d.parkedAt.toISOString(), state, d.error].join('\t'));
      }
      io.err(`${dead.length} dead event(s) in ${service}`);
    } else {
      const marked = await requestRetry(db, { ids: ids.length ? ids : undefined, consumer: values.consumer });
      io.err(`asked ${service} to retry ${marked.length} event(s)${marked.length ? `: ${marked.join(', ')}` : ''}`);
      if (ids.length && marked.length < ids.length) return 1;
    }
    return 0;
  } finally {
    await client.end();
  }
}

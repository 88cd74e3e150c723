import 'reflect-metadata';
import { createLogger } from '@crm/common';
import { CRM_RPC, CrmNatsServer, RpcClientsModule } from '@crm/messaging';
import { Controller, Get, Inject, INestApplication, Module, Param, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { ClientProxy, MessagePattern, Payload } from '@nestjs/microservices';
import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { createServer } from 'http';
import { firstValueFrom } from 'rxjs';
import { cpuMs, CONNECTIONS, DURATION_S, load, machine, Row, runBenchmark } from './bench-stack';

/**
 * What the required pieces cost before any of our code or SQL runs: the same contact-sized JSON answer
 * from memory, served by (1) a bare Node `http` server, (2) a NestJS app on Express, (3) a NestJS
 * gateway that asks a NestJS microservice for it over NATS with our ClientProxy and server, as the
 * stack's gateway and services do, and (2) and (3) again on NestJS's Fastify adapter. Each runs in processes of its own; the load alternates between them
 * in rounds. `npm run bench:floor`. The ratio of (3) to (1) is the ceiling for any stack ÷ bare ratio of
 * a request that crosses the gateway, before logging, keys, rate limits and the database are added.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? DURATION_S);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

const CONTACT = {
  data: {
    id: 'cont_01jd0000000000000000000000',
    email: 'ada@example.com',
    first_name: 'Ada',
    last_name: 'Lovelace',
    phone: null,
    title: 'Analyst',
    stage: 'lead',
    source: 'web',
    source_detail: null,
    icp_score: null,
    icp_score_reason: null,
    icp_scored_at: null,
    metadata: {},
    custom_fields: {},
    created_at: '2026-11-24T10:00:00.000Z',
    updated_at: '2026-11-24T10:00:00.000Z',
    relationships: { company: null, owner: null },
  },
  included: [],
};

@Controller('contacts')
class FromMemoryController {
  @Get(':id')
  get(@Param('id') _id: string) {
    return CONTACT;
  }
}

@Controller('contacts')
class ForwardingController {
  constructor(@Inject(CRM_RPC) private readonly services: ClientProxy) {}

  @Get(':id')
  get(@Param('id') id: string) {
    return firstValueFrom(this.services.send('probe.contacts.get', { params: { id } }));
  }
}

@Controller()
class AnsweringController {
  @MessagePattern('probe.contacts.get')
  get(@Payload() _request: unknown) {
    return CONTACT;
  }
}

function httpApp(module: Type<unknown>, fastify: boolean): Promise<INestApplication> {
  return fastify ? NestFactory.create<NestFastifyApplication>(module, new FastifyAdapter(), { logger: false }) : NestFactory.create(module, { logger: false });
}

/** One server of the comparison, in this process. */
async function serve(kind: string, port: number, namespace: string): Promise<void> {
  if (kind === 'bare') {
    const body = JSON.stringify(CONTACT);
    createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body)).listen(
      port,
      '127.0.0.1',
    );
  } else if (kind === 'nest' || kind === 'nest-fastify') {
    @Module({ controllers: [FromMemoryController] })
    class AppModule {}
    await (await httpApp(AppModule, kind === 'nest-fastify')).listen(port, '127.0.0.1');
  } else if (kind === 'nest-gateway' || kind === 'nest-gateway-fastify') {
    @Module({
      imports: [RpcClientsModule.forRoot({ servers: NATS_URL, name: 'floor-gateway', namespace, timeoutMs: 5000 })],
      controllers: [ForwardingController],
    })
    class GatewayModule {}
    const app = await httpApp(GatewayModule, kind === 'nest-gateway-fastify');
    await app.get<ClientProxy>(CRM_RPC).connect();
    await app.listen(port, '127.0.0.1');
  } else if (kind === 'nest-service') {
    @Module({ controllers: [AnsweringController] })
    class ServiceModule {}
    const strategy = new CrmNatsServer({ servers: NATS_URL, namespace, service: 'probe' as never, logger: createLogger('floor', 'silent') });
    await (await NestFactory.createMicroservice(ServiceModule, { strategy, logger: false })).listen();
  }
  process.stdout.write('ready\n');
}

function start(kind: string, port: number, namespace: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [__filename, 'serve', kind, String(port), namespace], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code}`)));
    child.stdout!.once('data', () => resolve(child));
  });
}

async function main(): Promise<void> {
  const namespace = `floor${randomBytes(4).toString('hex')}`;
  const base = 4700 + Math.floor(Math.random() * 200) * 5;
  const children: ChildProcess[] = [];
  const setups = [
    { name: 'bare Node http', port: base, kinds: ['bare'] },
    { name: 'NestJS on Express', port: base + 1, kinds: ['nest'] },
    { name: 'NestJS gateway → NATS → NestJS service', port: base + 2, kinds: ['nest-service', 'nest-gateway'] },
    { name: 'NestJS on Fastify', port: base + 3, kinds: ['nest-fastify'] },
    { name: 'NestJS gateway on Fastify → NATS → NestJS service', port: base + 4, kinds: ['nest-service', 'nest-gateway-fastify'] },
  ];
  const results = new Map<string, Array<Row & { cpu: number }>>();
  try {
    const processes = new Map<string, ChildProcess[]>();
    for (const setup of setups) {
      const started: ChildProcess[] = [];
      // A namespace per setup: each gateway's requests reach its own service, whose CPU is counted with it.
      for (const kind of setup.kinds) started.push(await start(kind, setup.port, `${namespace}${setups.indexOf(setup)}`));
      children.push(...started);
      processes.set(setup.name, started);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) {
        const own = processes.get(setup.name)!;
        const before = own.reduce((sum, c) => sum + cpuMs(c.pid!), 0);
        const row = await load(setup.name, `http://127.0.0.1:${setup.port}/contacts/cont_01jd0000000000000000000000`, '', {}, '', ROUND_S);
        const cpu = Math.round(((own.reduce((sum, c) => sum + cpuMs(c.pid!), 0) - before) * 1000) / Math.max(1, row.total));
        process.stderr.write(`round ${round + 1} ${setup.name}: ${row.requests_per_s} req/s, p50 ${row.p50_ms} ms, ${cpu} µs CPU/request\n`);
        results.set(setup.name, [...(results.get(setup.name) ?? []), { ...row, cpu }]);
      }
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const bare = median(results.get(setups[0].name)!.map((r) => r.requests_per_s));
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}; ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_S} s; medians.`,
    '',
    '| Server (same JSON from memory) | req/s | ÷ bare | p50 ms | p99 ms | CPU µs/request (its processes) |',
    '|---|---:|---:|---:|---:|---:|',
    ...setups.map(({ name }) => {
      const rows = results.get(name)!;
      const rps = median(rows.map((r) => r.requests_per_s));
      return `| ${name} | ${rps} | ${(rps / bare).toFixed(2)}x | ${median(rows.map((r) => r.p50_ms))} | ${median(rows.map((r) => r.p99_ms))} | ${median(rows.map((r) => r.cpu))} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (process.argv[2] === 'serve') {
  serve(process.argv[3], Number(process.argv[4]), process.argv[5]).catch((err) => {
    process.stderr.write(`floor: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
} else {
  runBenchmark(main);
}

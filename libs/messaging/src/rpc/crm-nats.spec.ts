import { DEFAULT_NATS_URL, DomainError, ErrorCode, Logger } from '@crm/common';
import { Controller, INestMicroservice, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { randomBytes } from 'crypto';
import pino from 'pino';
import { firstValueFrom } from 'rxjs';
import { CrmNatsClient } from './crm-nats.client';
import { CrmNatsServer } from './crm-nats.server';
import { RpcErrorFilter } from './rpc-errors';
import { RawJson } from './split-replies';
import { connect, headers as natsHeaders, JSONCodec, NatsConnection } from 'nats';
import { gzipSync } from 'zlib';
import { INFLATED_MAX_BYTES } from './compressed-messages';
import { rpcSubject } from '@crm/contracts';
import { QueryFailedError } from 'typeorm';

/** 3 MiB that gzip cannot bring under the broker's 1 MiB limit (messages over 64 KiB travel compressed). */
const incompressible = () => randomBytes(2304 * 1024).toString('base64');

/**
 * The request/reply transport against a real NATS server: subject prefix, queue groups, deadlines,
 * error transport, payload limits and draining. The handlers are a stand-in service, the transport is ours.
 */
const logs: string[] = [];
const logger: Logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });

const gates = new Map<string, () => void>();

function replicaController(replica: string) {
  @Controller()
  class ProbeController {
    @MessagePattern('probe.things.echo')
    echo(@Payload() body: unknown) {
      return { replica, body };
    }

    @MessagePattern('probe.things.conflict')
    conflict() {
      throw new DomainError(ErrorCode.Conflict, 'Already there.', [{ field: 'email', code: 'duplicate', message: 'taken' }]);
    }

    @MessagePattern('probe.things.crash')
    crash() {
      throw new Error('driver said: password=hunter2');
    }

    /** What the pg driver raises when PostgreSQL cannot read a bound value as its type (SQLSTATE 22007). */
    @MessagePattern('probe.things.bad-date')
    badDate() {
      const driverError = Object.assign(new Error('invalid input syntax for type timestamp with time zone: "sk_secret_value"'), { code: '22007' });
      throw new QueryFailedError('SELECT * FROM things WHERE created_at > $1::timestamptz', ['sk_secret_value'], driverError);
    }

    @MessagePattern('probe.things.huge')
    huge() {
      return incompressible();
    }

    /** Over 64 KiB of JSON that compresses well: a page of records. */
    @MessagePattern('probe.things.page')
    page() {
      return { data: Array.from({ length: 2000 }, (_, i) => ({ id: `rec_${i}`, name: `Record ${i}`, tags: ['a', 'b'], note: 'é ✓' })), has_more: false };
    }

    @MessagePattern('probe.things.nothing')
    nothing() {
      return undefined;
    }

    @MessagePattern('probe.things.slow')
    async slow(@Payload() body: { gate: string }) {
      await new Promise<void>((resolve) => gates.set(body.gate, resolve));
      return { replica, finished: body.gate };
    }

    @MessagePattern('probe.things.never')
    never() {
      return new Promise(() => undefined);
    }
  }
  return ProbeController;
}

async function startReplica(namespace: string, replica: string, drainGraceMs = 1000): Promise<{ app: INestMicroservice; server: CrmNatsServer }> {
  @Module({ controllers: [replicaController(replica)] })
  class ProbeModule {}
  // The transport is generic; 'probe' stands where a real service name goes.
  const server = new CrmNatsServer({ servers: DEFAULT_NATS_URL, namespace, service: 'probe' as never, logger, drainGraceMs });
  const app = await NestFactory.createMicroservice(ProbeModule, { strategy: server, logger: false });
  app.useGlobalFilters(new RpcErrorFilter(logger));
  await app.listen();
  return { app, server };
}

function client(namespace: string, timeoutMs = 2000): CrmNatsClient {
  return new CrmNatsClient({ servers: DEFAULT_NATS_URL, name: 'crm-test', namespace, timeoutMs });
}

const ask = <T = unknown>(c: CrmNatsClient, pattern: string, body: unknown = {}) => firstValueFrom(c.send<T>(pattern, body));

function namespace(): string {
  return `t${process.env.CRM_TEST_RUN ?? ''}${randomBytes(5).toString('hex')}`;
}

describe('CrmNatsServer and CrmNatsClient over NATS', () => {
  const ns = namespace();
  const replicas: Array<{ app: INestMicroservice; server: CrmNatsServer }> = [];
  let caller: CrmNatsClient;

  beforeAll(async () => {
    replicas.push(await startReplica(ns, 'a'), await startReplica(ns, 'b'));
    // Generous: every request here has an answer, and a loaded machine may take seconds to give it.
    caller = client(ns, 30_000);
  });
  afterAll(async () => {
    await caller.close();
    for (const r of replicas) await r.app.close();
  });

  it('answers on the namespaced subject and shares requests between replicas through the queue group', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => ask<{ replica: string; body: unknown }>(caller, 'probe.things.echo', { i })));
    expect(answers.map((a) => a.body)).toEqual(Array.from({ length: 40 }, (_, i) => ({ i })));
    const byReplica = new Set(answers.map((a) => a.replica));
    expect(byReplica).toEqual(new Set(['a', 'b']));
  });

  it('keeps deployments apart: another namespace on the same server has nobody to answer', async () => {
    const other = client(namespace(), 500);
    try {
      await expect(ask(other, 'probe.things.echo')).rejects.toMatchObject({
        code: ErrorCode.ServiceUnavailable,
        message: 'The probe service is not available; try again shortly.',
      });
    } finally {
      await other.close();
    }
  });

  it('carries a domain error with its code, message and details', async () => {
    const failure = await ask(caller, 'probe.things.conflict').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).toBody()).toEqual({
      code: 'conflict',
      message: 'Already there.',
      details: [{ field: 'email', code: 'duplicate', message: 'taken' }],
    });
  });

  it('turns any other failure into internal_error, logged on the service side, without its text', async () => {
    await expect(ask(caller, 'probe.things.crash')).rejects.toMatchObject({ code: 'internal_error', message: 'An internal error occurred.' });
    expect(logs.some((line) => line.includes('unhandled error in rpc handler'))).toBe(true);
  });

  it('answers a data exception (SQLSTATE class 22) as 400 invalid_request, logging neither the statement nor the value', async () => {
    logs.length = 0;
    await expect(ask(caller, 'probe.things.bad-date')).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'A value in the request is not valid for its type.',
    });
    const line = logs.find((l) => l.includes('a value in the request failed in the database'));
    expect(JSON.parse(line!)).toMatchObject({ level: 40, sqlstate: '22007' });
    expect(logs.join('\n')).not.toContain('sk_secret_value');
    expect(logs.join('\n')).not.toContain('SELECT');
  });

  it('answers 501 not_implemented for an operation the running service lacks', async () => {
    await expect(ask(caller, 'probe.things.frobnicate')).rejects.toMatchObject({ code: 'not_implemented' });
  });

  it('fails a request nobody answers in time as service_unavailable', async () => {
    const impatient = client(ns, 500);
    try {
      await expect(ask(impatient, 'probe.things.never')).rejects.toMatchObject({
        code: 'service_unavailable',
        message: 'The probe service did not answer within 500 ms; try again shortly.',
      });
    } finally {
      await impatient.close();
    }
  });

  it('refuses a request over the broker payload limit as payload_too_large', async () => {
    await expect(ask(caller, 'probe.things.echo', { blob: incompressible() })).rejects.toMatchObject({ code: 'payload_too_large' });
  });

  it('routes each reply to its own request, also when one was abandoned before its answer came', async () => {
    const gate = `${ns}-abandoned`;
    let lateAnswers = 0;
    const abandoned = caller.send('probe.things.slow', { gate }).subscribe({ next: () => lateAnswers++ });
    await waitFor(() => gates.has(gate));
    abandoned.unsubscribe();
    gates.get(gate)!();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => ask<{ body: { i: number } }>(caller, 'probe.things.echo', { i })));
    expect(answers.map((a) => a.body.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(lateAnswers).toBe(0);
  });

  it('fails requests still waiting when the client closes, as service_unavailable', async () => {
    const closing = client(ns, 30_000);
    const gate = `${ns}-closing`;
    const waiting = ask(closing, 'probe.things.slow', { gate });
    await waitFor(() => gates.has(gate));
    const closedAt = Date.now();
    await closing.close();
    await expect(waiting).rejects.toMatchObject({ code: 'service_unavailable' });
    // At once, not when the 30 s deadline runs out.
    expect(Date.now() - closedAt).toBeLessThan(5000);
    gates.get(gate)!();
  });

  it('replaces a reply over the broker payload limit by an error instead of losing it', async () => {
    await expect(ask(caller, 'probe.things.huge')).rejects.toMatchObject({
      code: 'internal_error',
      message: 'The response is too large; ask for a smaller page.',
    });
  });
});

describe('split replies', () => {
  const ns = namespace();
  let replica: { app: INestMicroservice; server: CrmNatsServer };
  let caller: CrmNatsClient;
  let nc: NatsConnection;
  const pass = (c: CrmNatsClient, pattern: string, body: object = {}) => firstValueFrom(c.sendPassingThrough(pattern, body), { defaultValue: undefined });

  beforeAll(async () => {
    replica = await startReplica(ns, 'a');
    caller = client(ns, 5000);
    nc = await connect({ servers: DEFAULT_NATS_URL });
  });
  afterAll(async () => {
    await caller.close();
    await nc.close();
    await replica.app.close();
  });

  it("hands a caller that passes the reply on the service's JSON unparsed, the same JSON `send` parses, small or compressed", async () => {
    for (const [pattern, body] of [
      ['probe.things.echo', { i: 1, text: 'é ✓' }],
      ['probe.things.page', {}],
    ] as const) {
      const raw = await pass(caller, pattern, body);
      expect(raw).toBeInstanceOf(RawJson);
      const parsed = await ask(caller, pattern, body);
      expect((raw as RawJson).json).toBe(JSON.stringify(parsed));
    }
    expect(JSON.stringify(await ask(caller, 'probe.things.page')).length).toBeGreaterThan(64 * 1024);
    // No reply value: both complete without one, as RpcCaller reads it (a 204 at the gateway).
    await expect(pass(caller, 'probe.things.nothing')).resolves.toBeUndefined();
    await expect(firstValueFrom(caller.send('probe.things.nothing', {}), { defaultValue: undefined })).resolves.toBeUndefined();
  });

  it('still carries errors as domain errors to a caller that passes the reply on', async () => {
    const failure = await pass(caller, 'probe.things.conflict').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('conflict');
  });

  it("answers a caller of an older build, which does not ask for the split layout, in Nest's envelope", async () => {
    const codec = JSONCodec<{ id: string; response: unknown; isDisposed: boolean }>();
    const reply = await nc.request(
      rpcSubject(ns, 'probe.things.echo'),
      JSONCodec().encode({ pattern: 'probe.things.echo', data: { old: true }, id: 'legacy-1' }),
      { timeout: 5000 },
    );
    expect(codec.decode(reply.data)).toEqual({ id: 'legacy-1', response: { replica: 'a', body: { old: true } }, isDisposed: true });
  });

  it("reads a service of an older build, which answers in Nest's envelope, also when the caller passes the reply on", async () => {
    const older = namespace();
    const codec = JSONCodec<{ id: string; data: unknown }>();
    const subscription = nc.subscribe(rpcSubject(older, 'probe.things.echo'), {
      callback: (_err, msg) => {
        const { id, data } = codec.decode(msg.data);
        const h = natsHeaders();
        h.set('X-Older-Build', 'yes');
        msg.respond(JSONCodec().encode({ id, response: { older: data }, isDisposed: true }), { headers: h });
      },
    });
    await nc.flush();
    const olderCaller = client(older, 5000);
    try {
      await expect(pass(olderCaller, 'probe.things.echo', { n: 1 })).resolves.toEqual({ older: { n: 1 } });
      await expect(ask(olderCaller, 'probe.things.echo', { n: 2 })).resolves.toEqual({ older: { n: 2 } });
    } finally {
      subscription.unsubscribe();
      await olderCaller.close();
    }
  });
});

describe('compressed messages past the inflation cap', () => {
  const ns = namespace();
  let replica: { app: INestMicroservice; server: CrmNatsServer };
  let caller: CrmNatsClient;
  let nc: NatsConnection;
  /** A gzip bomb in the transport's layout: a few dozen KiB that inflate to twice the cap. */
  const bomb = (head: string, tail: string) =>
    gzipSync(Buffer.concat([Buffer.from(head), Buffer.alloc(2 * INFLATED_MAX_BYTES, 'a'), Buffer.from(tail)]), { level: 9 });

  beforeAll(async () => {
    replica = await startReplica(ns, 'a');
    caller = client(ns, 30_000);
    nc = await connect({ servers: DEFAULT_NATS_URL });
  });
  afterAll(async () => {
    await caller.close();
    await nc.close();
    await replica.app.close();
  });

  it('answers a request that inflates past the cap with payload_too_large, logs it without the payload, and serves the next one', async () => {
    const request = bomb('{"pattern":"probe.things.echo","id":"s.bomb","data":{"blob":"', '"}}');
    expect(request.length).toBeLessThan(1024 * 1024);
    const reply = await nc.request(rpcSubject(ns, 'probe.things.echo'), request, { timeout: 30_000 });
    expect(JSONCodec().decode(reply.data)).toEqual({
      err: { code: 'payload_too_large', message: `A compressed message may inflate to at most ${INFLATED_MAX_BYTES} bytes.` },
      isDisposed: true,
    });
    const line = logs.find((l) => l.includes('refused an rpc request that inflates past the limit'));
    expect(line).toBeDefined();
    expect(line).not.toContain('aaaa');
    await expect(ask(caller, 'probe.things.echo', { after: true })).resolves.toEqual({ replica: 'a', body: { after: true } });
  });

  it("fails a caller's request as internal_error when the answer inflates past the cap, and the caller goes on", async () => {
    const rogue = namespace();
    const subscription = nc.subscribe(rpcSubject(rogue, 'probe.things.echo'), {
      // The split layout: its mark, then the response's JSON.
      callback: (_err, msg) => msg.respond(bomb('\u0000"', '"')),
    });
    await nc.flush();
    const rogueCaller = client(rogue, 30_000);
    try {
      await expect(ask(rogueCaller, 'probe.things.echo')).rejects.toMatchObject({
        code: 'internal_error',
        message: 'The probe service answered with a message larger than any valid answer.',
      });
      await expect(ask(caller, 'probe.things.echo', { still: true })).resolves.toEqual({ replica: 'a', body: { still: true } });
    } finally {
      subscription.unsubscribe();
      await rogueCaller.close();
    }
  });
});

describe('CrmNatsServer.drain', () => {
  it('lets in-flight requests answer, then takes no more', async () => {
    const ns = namespace();
    // Generous deadlines: on a loaded CI machine the first request alone can take seconds.
    const { app, server } = await startReplica(ns, 'only', 30_000);
    const caller = client(ns, 30_000);
    try {
      const inFlight = ask<{ finished: string }>(caller, 'probe.things.slow', { gate: `${ns}-1` });
      await waitFor(() => gates.has(`${ns}-1`));
      let drained = false;
      const draining = server.drain().then(() => (drained = true));
      await waitFor(() => !server.accepting);
      await expect(ask(caller, 'probe.things.echo')).rejects.toMatchObject({ code: 'service_unavailable', message: expect.not.stringContaining('within') });
      expect(drained).toBe(false);
      gates.get(`${ns}-1`)!();
      await expect(inFlight).resolves.toEqual({ replica: 'only', finished: `${ns}-1` });
      await draining;
      expect(drained).toBe(true);
    } finally {
      await caller.close();
      await app.close();
    }
  });
});

/** `timeoutMs` is a safety net inside the jest timeout, not an expected speed. */
async function waitFor(condition: () => boolean, timeoutMs = 50_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

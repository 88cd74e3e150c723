import { existsSync, readdirSync, readFileSync } from 'fs';
import { join, relative } from 'path';
import { satisfies } from 'semver';
import { parse, parseAllDocuments } from 'yaml';
import { attribute, BASE_READERS, scanSources, shippedSources } from './env-extraction';

/**
 * Keeps Dockerfile, docker-compose.yml and k8s/ in step with the code: every process is deployed,
 * every variable it reads is set for it (or its default is right for deployment, see DEFAULT_IS_RIGHT),
 * nothing sets a variable no code reads, and commands, ports and probes point where the code listens.
 */

const ROOT = join(__dirname, '..', '..');
const SERVICES = ['contacts', 'deals', 'events', 'webhooks'] as const;
const PROCESSES = ['gateway', ...SERVICES] as const;
type Process = (typeof PROCESSES)[number];

/**
 * Reads in libs/ that only some processes make, by the function they are in. loadServiceConfig is
 * called by startService (libs/runtime), which only the four NATS services use; the gateway reads
 * loadBaseConfig plus its own loadGatewayConfig. Every other read in libs/ counts for all five.
 */
const LIB_SCOPES: Record<string, readonly Process[]> = {
  loadServiceConfig: SERVICES,
  loadQuerySettings: ['contacts', 'deals'],
  loadChangeSettings: ['contacts', 'deals'],
};

/**
 * Variables deliberately left unset in compose and Kubernetes because the code's default is the right
 * value there. Keep this short; everything else is set explicitly so operators see it.
 */
const DEFAULT_IS_RIGHT: Record<string, string> = {
  // Listen on all interfaces (0.0.0.0): required in a container, where probes and peers come from outside.
  HOST: 'gateway listen address',
  HEALTH_HOST: 'service health endpoint listen address',
  // A seconds-precision override of DEALS_STALE_AFTER_DAYS for demos and tests; setting it in a
  // deployment would silently replace the product setting, so it must stay unset.
  DEALS_STALE_AFTER_SECONDS: 'demo/test override of DEALS_STALE_AFTER_DAYS',
  // Unset, each process picks the pool its role needs (gateway 20, services 10); set it to shrink them.
  DATABASE_POOL_SIZE: 'per-process pool size override',
  // Tracing is off unless an OTLP endpoint is configured; a platform team sets these to its collector.
  OTEL_EXPORTER_OTLP_ENDPOINT: 'tracing off by default',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'tracing off by default',
  OTEL_SERVICE_NAME: 'defaults to crm-<process>',
  // Only `main.js migrate` (the crm-migrate Job) grants a role; serving processes never need to.
  DATABASE_APP_ROLE: 'set on the migration Job only',
  // `run` is right for compose and one machine; Kubernetes sets `verify` (and the wait) in crm-config.
  DATABASE_MIGRATIONS: 'migrate at start outside Kubernetes',
  DATABASE_MIGRATIONS_WAIT_SECONDS: 'only read in verify mode',
  // Bounds on the work one read may do, sized for the deployment's database as shipped: an operator
  // changes them only to trade a read's reach for the database's memory and disk (docs/deployment.md).
  AGGREGATE_WORK_MEM: 'aggregation work_mem, 64MB',
  AGGREGATE_TEMP_FILE_LIMIT: 'aggregation temp_file_limit, 1GB',
  EVENTS_FILTER_SCAN_COST: 'condition tests per filtered page of the event log',
  SEARCH_WORD_CANDIDATES: 'rows of an object the exact search tier ranks per query, 1000',
};

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

// ---------------------------------------------------------------------------------------------
// What the code reads
// ---------------------------------------------------------------------------------------------

describe('environment extraction', () => {
  const sample = `
    import { Env, intVar, optionalVar, stringVar } from '@crm/common';
    function listVar(env: Env, name: string): string[] {
      return stringVar(env, name, '').split(',');
    }
    const csvVar = (env: Env, key: string) => listVar(env, key);
    export function loadThing(env: Env) {
      return {
        port: intVar(env, 'THING_PORT', 1, { min: 0 }),
        secret: optionalVar(env, "THING_SECRET"),
        hosts: listVar(env, 'THING_HOSTS'),
        tags: csvVar(env, \`THING_TAGS\`),
        direct: process.env.THING_DIRECT ?? env['THING_INDEXED'],
      };
    }
    const KEY = 'THING_DYNAMIC';
    export const dynamic = (env: Env) => intVar(env, KEY, 0);
  `;

  it('finds literal reads, reads through wrappers and direct reads, and reports dynamic names', () => {
    const result = scanSources([{ path: 'apps/thing/src/thing.settings.ts', text: sample }]);
    expect(result.reads.map((r) => r.name).sort()).toEqual(['THING_DIRECT', 'THING_HOSTS', 'THING_INDEXED', 'THING_PORT', 'THING_SECRET', 'THING_TAGS'].sort());
    expect(result.readers.get('listVar')).toBe(1);
    expect(result.readers.get('csvVar')).toBe(1);
    expect(result.reads.find((r) => r.name === 'THING_PORT')).toMatchObject({ fn: 'loadThing', line: 9 });
    expect(result.unresolved).toHaveLength(1);
    expect(result.unresolved[0].code).toContain('KEY');
  });

  it('attributes reads in apps/<app> to that app and reads in libs to every process or a scoped set', () => {
    const byProcess = attribute(
      [
        { name: 'A', path: 'apps/deals/src/x.ts', line: 1 },
        { name: 'B', path: 'libs/common/src/config.ts', line: 1, fn: 'loadBaseConfig' },
        { name: 'C', path: 'libs/common/src/config.ts', line: 1, fn: 'loadServiceConfig' },
      ],
      PROCESSES,
      LIB_SCOPES,
    );
    expect([...byProcess.get('deals')!].sort()).toEqual(['A', 'B', 'C']);
    expect([...byProcess.get('gateway')!].sort()).toEqual(['B']);
    expect([...byProcess.get('events')!].sort()).toEqual(['B', 'C']);
  });
});

const scan = scanSources(shippedSources(ROOT), BASE_READERS);
const codeReads = attribute(scan.reads, PROCESSES, LIB_SCOPES) as Map<Process, Set<string>>;
const allRead = new Set(scan.reads.map((r) => r.name));

describe('the code', () => {
  it('reads every variable through a name the extraction can resolve', () => {
    expect(scan.unresolved.map((u) => `${u.path}:${u.line} ${u.code}`)).toEqual([]);
  });

  it('is what the extraction expects: known reads are found, scoped library functions exist', () => {
    // Guards the extraction itself against silently finding nothing.
    for (const process of PROCESSES) {
      for (const name of ['DATABASE_URL', 'NATS_URL', 'CRM_NAMESPACE', 'LOG_LEVEL', 'RPC_TIMEOUT_MS']) expect(codeReads.get(process)).toContain(name);
    }
    expect(codeReads.get('gateway')).toEqual(expect.any(Set));
    expect([...codeReads.get('gateway')!]).toEqual(expect.arrayContaining(['PORT', 'REDIS_URL', 'CRM_BOOTSTRAP_API_KEY']));
    // Every process has a health port; the gateway reads it in its own configuration.
    for (const process of PROCESSES) expect(codeReads.get(process)).toContain('HEALTH_PORT');
    // Read through a local wrapper (scheduleVar), not a reader of libs/common.
    expect(codeReads.get('webhooks')).toContain('WEBHOOKS_RETRY_SCHEDULE_MS');
    for (const fn of Object.keys(LIB_SCOPES)) expect(scan.reads.some((r) => r.fn === fn)).toBe(true);
  });

  it('keeps the gateway away from the service start-up that reads HEALTH_PORT and HEALTH_HOST', () => {
    // LIB_SCOPES leaves loadServiceConfig out of the gateway; that holds only while it never calls it.
    const gatewaySources = shippedSources(ROOT).filter((f) => f.path.startsWith('apps/gateway/'));
    for (const f of gatewaySources) expect(f.text).not.toMatch(/\b(loadServiceConfig|startService)\b/);
  });

  it('has exactly the five deployed processes, each with a main.ts', () => {
    const apps = readdirSync(join(ROOT, 'apps')).filter((d) => existsSync(join(ROOT, 'apps', d, 'src', 'main.ts')));
    expect(apps.sort()).toEqual([...PROCESSES].sort());
  });

  it('has an allow-list of variables some process really reads', () => {
    for (const name of Object.keys(DEFAULT_IS_RIGHT)) expect(allRead).toContain(name);
  });

  it('has every variable it reads in the configuration reference of docs/deployment.md', () => {
    const documented = new Set([...read('docs/deployment.md').matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]));
    expect([...allRead].filter((name) => !documented.has(name)).sort()).toEqual([]);
    expect([...documented].filter((name) => !allRead.has(name)).sort()).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Shared checks of one deployable's settings
// ---------------------------------------------------------------------------------------------

function checkVariables(where: string, process: Process, set: Set<string>): void {
  const reads = codeReads.get(process)!;
  const missing = [...reads].filter((name) => !set.has(name) && !(name in DEFAULT_IS_RIGHT)).sort();
  const unknown = [...set].filter((name) => !reads.has(name)).sort();
  expect({ where, process, missing, unknown }).toEqual({ where, process, missing: [], unknown: [] });
}

/** The port of the API (the gateway's PORT) or of the probes and metrics (every process's HEALTH_PORT). */
function listenPort(process: Process, env: Map<string, string>, which: 'api' | 'health' = process === 'gateway' ? 'api' : 'health'): number {
  const name = which === 'api' ? 'PORT' : 'HEALTH_PORT';
  const value = env.get(name);
  if (value === undefined) throw new Error(`${process}: ${name} is not set`);
  expect(value).toMatch(/^\d+$/);
  return Number(value);
}

function checkCommand(where: string, process: Process, command: unknown): void {
  expect({ where, command }).toEqual({ where, command: ['node', `dist/apps/${process}/src/main.js`] });
}

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  const stages = lines.filter((l) => /^FROM\s/i.test(l));

  it('builds in one stage and runs production dependencies only in another, from a pinned Node.js 22 LTS image', () => {
    expect(stages).toHaveLength(2);
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1];
    expect(image).toMatch(/^node:22\.\d+\.\d+-bookworm-slim$/);
    // The image's Node is one package.json admits.
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    expect(satisfies(/^node:(\S+?)-/.exec(image!)![1], engines)).toBe(true);
    for (const stage of stages) expect(stage).toMatch(/^FROM \$\{NODE_IMAGE\} AS \w+$/);
    const [, runtime] = text.split(/^FROM .*$/m).slice(1);
    const build = text.split(/^FROM .*$/m)[1];
    expect(build).toMatch(/^RUN npm ci\b/m);
    expect(build).toMatch(/^RUN npm run build$/m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(runtime).toMatch(/^COPY --from=build \S+\/dist\/apps /m);
    expect(runtime).toMatch(/^COPY --from=build \S+\/dist\/libs /m);
  });

  it('runs as a non-root numeric user and defaults to the gateway', () => {
    const user = /^USER\s+(\S+)$/m.exec(text.split(/^FROM .*$/m)[2])?.[1];
    expect(user).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    expect(text).toMatch(/^CMD \["node", "dist\/apps\/gateway\/src\/main\.js"\]$/m);
    expect(text).not.toMatch(/^ENTRYPOINT/m);
  });

  it('keeps the build context small and free of local state', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['node_modules', 'dist', '.git', '.data', '.env']) expect(ignored).toContain(entry);
  });
});

// ---------------------------------------------------------------------------------------------
// docker compose
// ---------------------------------------------------------------------------------------------

/** The value compose would use when no variable of the shell overrides it: `${X:-default}` → default. */
function composeDefault(value: string): string {
  return value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-?][^}]*)?\}/g, (m) => {
    const d = /^\$\{[^:}-]+:?-(.*)\}$/.exec(m);
    return d ? d[1] : '';
  });
}

function composeEnv(service: Record<string, unknown>): Map<string, string> {
  expect(service.env_file).toBeUndefined();
  const env = new Map<string, string>();
  const raw = service.environment ?? {};
  if (Array.isArray(raw)) {
    for (const item of raw as string[]) {
      const [name, ...rest] = item.split('=');
      env.set(name, composeDefault(rest.join('=')));
    }
  } else {
    for (const [name, value] of Object.entries(raw as Record<string, unknown>)) env.set(name, composeDefault(String(value ?? '')));
  }
  return env;
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Record<string, any>>; volumes?: Record<string, unknown> };
  const services = compose.services;

  it('runs PostgreSQL with a healthcheck, Redis, and NATS with JetStream on a volume', () => {
    expect(services.postgres.image).toMatch(/^postgres:1[56]\b/);
    expect(services.postgres.healthcheck?.test).toBeDefined();
    expect(services.redis.image).toMatch(/^redis:/);
    expect(services.redis.healthcheck?.test).toBeDefined();
    expect(services.nats.image).toMatch(/^nats:/);
    const natsArgs = services.nats.command as string[];
    expect(natsArgs).toEqual(expect.arrayContaining(['-js']));
    const storeDir = natsArgs[natsArgs.indexOf('-sd') + 1];
    expect(natsArgs).toContain('-sd');
    const volume = (services.nats.volumes as string[]).find((v) => v.endsWith(`:${storeDir}`));
    expect(volume).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(volume!.split(':')[0]);
    expect(services.nats.healthcheck?.test).toBeDefined();
  });

  it('defines all five processes from one image', () => {
    for (const process of PROCESSES) expect(Object.keys(services)).toContain(process);
    const images = new Set(PROCESSES.map((p) => services[p].image));
    expect(images.size).toBe(1);
  });

  describe.each(PROCESSES)('%s', (process) => {
    const service = () => services[process];
    const env = () => composeEnv(service());

    it('runs its own entry point', () => checkCommand(`compose ${process}`, process, service().command));

    it('sets every variable it reads and none it does not', () => checkVariables('compose', process, new Set(env().keys())));

    it('waits for healthy dependencies', () => {
      const needs: string[] = ['postgres', 'nats', ...(codeReads.get(process)!.has('REDIS_URL') ? ['redis'] : [])];
      for (const dependency of needs)
        expect({ dependency, condition: service().depends_on?.[dependency]?.condition }).toEqual({ dependency, condition: 'service_healthy' });
    });

    it('publishes the API port only and probes the health port, at /health', () => {
      const port = listenPort(process, env());
      const health = listenPort(process, env(), 'health');
      const published = ((service().ports ?? []) as Array<string | { target: number }>).map((p) =>
        typeof p === 'string' ? Number(composeDefault(p).split(':').pop()!.split('/')[0]) : Number(p.target),
      );
      // The gateway's health port (probes, full status, metrics) is never published.
      if (process === 'gateway') expect(published).toEqual([port]);
      else for (const target of published) expect(target).toBe(port);
      const test = (service().healthcheck?.test as string[]).join(' ');
      expect(test).toContain(`127.0.0.1:${health}/health`);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Kubernetes
// ---------------------------------------------------------------------------------------------

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: any;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('k8s/', () => {
  const dir = join(ROOT, 'k8s');
  // k8s/monitoring is an optional component, not part of the base (checked below).
  const files = yamlFiles(dir)
    .map((f) => relative(dir, f))
    .filter((f) => !f.startsWith('monitoring/') && !f.startsWith('network-ports/'));
  const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
    namespace: string;
    images?: Array<{ name: string }>;
  };
  const objects: K8sObject[] = files
    .filter((f) => f !== 'kustomization.yaml')
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((doc) => {
        expect({ file: f, errors: doc.errors.map(String) }).toEqual({ file: f, errors: [] });
        return doc.toJS() as K8sObject;
      }),
    )
    .filter((o) => o !== null);
  const find = (kind: string, name?: string) => objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  const configMaps = new Map(find('ConfigMap').map((c) => [c.metadata.name, Object.keys(c.data ?? {})]));
  const secrets = new Map(find('Secret').map((s) => [s.metadata.name, [...Object.keys(s.data ?? {}), ...Object.keys(s.stringData ?? {})]]));
  const configMapValues = new Map(find('ConfigMap').map((c) => [c.metadata.name, c.data as Record<string, string>]));

  it('is one kustomize base listing every manifest, with a Namespace, a ConfigMap and a Secret', () => {
    expect([...kustomization.resources].sort()).toEqual(files.filter((f) => f !== 'kustomization.yaml').sort());
    expect(find('Namespace').map((n) => n.metadata.name)).toEqual([kustomization.namespace]);
    expect(configMaps.size).toBeGreaterThan(0);
    expect(secrets.size).toBeGreaterThan(0);
    for (const s of find('Secret')) expect(JSON.stringify(s.stringData ?? s.data)).toContain('REPLACE_ME');
  });

  it('labels everything with the version of the image it deploys', () => {
    const labels = (kustomization as unknown as { labels: Array<{ pairs: Record<string, string>; includeTemplates?: boolean }> }).labels;
    const version = labels.find((l) => l.pairs['app.kubernetes.io/version']);
    expect(version?.pairs['app.kubernetes.io/version']).toBe((kustomization.images as Array<{ newTag?: string }>)[0].newTag);
    expect(version?.includeTemplates).toBe(true);
  });

  it('lets traffic in only to the gateway, and out only to what each process needs', () => {
    const policies = find('NetworkPolicy');
    const deny = policies.find((p) => p.metadata.name === 'default-deny')!;
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const containerPort = (component: string, name = component === 'gateway' ? 'http' : 'health') =>
      find('Deployment', component)[0].spec.template.spec.containers[0].ports.find((p: { name: string }) => p.name === name).containerPort as number;
    // Open ingress (no `from`) exists for the gateway's API port only.
    const open = policies.flatMap((p) =>
      (p.spec.ingress ?? [])
        .filter((rule: { from?: unknown }) => !rule.from)
        .map((rule: { ports: Array<{ port: number }> }) => ({ pod: p.spec.podSelector.matchLabels, ports: rule.ports.map((x) => x.port) })),
    );
    expect(open).toEqual([{ pod: { 'app.kubernetes.io/component': 'gateway' }, ports: [containerPort('gateway')] }]);
    // Prometheus may scrape every process's metrics port.
    const scraped = policies.find((p) => p.metadata.name === 'metrics-scraping')!.spec.ingress[0].ports.map((x: { port: number }) => x.port);
    for (const process of PROCESSES) expect({ process, scraped: scraped.includes(containerPort(process, 'health')) }).toEqual({ process, scraped: true });
    expect(scraped).not.toContain(containerPort('gateway'));
    const egressPorts = (name: string) =>
      policies.find((p) => p.metadata.name === name)!.spec.egress.flatMap((rule: { ports?: Array<{ port: number }> }) => (rule.ports ?? []).map((x) => x.port));
    expect(egressPorts('dependencies-egress')).toEqual(expect.arrayContaining([53, 5432, 4222]));
    expect(egressPorts('dependencies-egress')).not.toContain(6379);
    expect(egressPorts('gateway-redis-egress')).toEqual([6379]);
  });

  it('has an Ingress example that routes to the gateway Service by port name', () => {
    const ingress = parse(readFileSync(join(ROOT, 'deploy', 'with-ingress', 'ingress.yaml'), 'utf8')) as K8sObject;
    const backend = ingress.spec.rules[0].http.paths[0].backend.service;
    const service = find('Service', 'gateway')[0];
    expect(backend.name).toBe('gateway');
    expect(service.spec.ports.map((p: { name: string }) => p.name)).toContain(backend.port.name);
  });

  it('leaves PostgreSQL, NATS and Redis to the platform', () => {
    expect(find('StatefulSet')).toEqual([]);
  });

  it('migrates in a Job, as a role only that Job holds, and lets pods only verify the schema', () => {
    const [job, ...others] = find('Job');
    expect(others).toEqual([]);
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('OnFailure');
    expect(job.spec.ttlSecondsAfterFinished).toBeGreaterThan(0);
    // One container per process, each running its own migrate command.
    expect(pod.containers.map((c: { name: string; command: string[] }) => [c.name, c.command])).toEqual(
      PROCESSES.map((p) => [p, ['node', `dist/apps/${p}/src/main.js`, 'migrate']]),
    );
    for (const c of pod.containers) {
      const env = new Map<string, any>(c.env.map((e: { name: string }) => [e.name, e]));
      expect(env.get('DATABASE_URL').valueFrom.secretKeyRef).toEqual({ name: 'crm-migrator', key: 'MIGRATOR_DATABASE_URL' });
      expect(env.get('DATABASE_APP_ROLE').value).toBe('crm_app');
      expect(c.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
      expect(c.image).toBe(kustomization.images![0].name);
    }
    expect(secrets.get('crm-migrator')).toEqual(['MIGRATOR_DATABASE_URL']);
    // No Deployment can read the migrator's credential; they connect as crm_app and only verify.
    const deployments = JSON.stringify(find('Deployment'));
    expect(deployments).not.toContain('crm-migrator');
    expect(configMapValues.get('crm-config')).toMatchObject({ DATABASE_MIGRATIONS: 'verify' });
    const waitSeconds = Number(configMapValues.get('crm-config')!.DATABASE_MIGRATIONS_WAIT_SECONDS);
    for (const d of find('Deployment')) {
      const startup = d.spec.template.spec.containers[0].startupProbe;
      expect({ deployment: d.metadata.name, waitFits: waitSeconds < startup.periodSeconds * startup.failureThreshold }).toEqual({
        deployment: d.metadata.name,
        waitFits: true,
      });
    }
    // The SQL that creates both roles is documented, with the role names the manifests use.
    const guide = read('docs/deployment.md');
    for (const sql of ['CREATE ROLE crm_migrator', 'CREATE ROLE crm_app', 'OWNER crm_migrator']) expect(guide).toContain(sql);
  });

  it('has a Deployment for each of the five processes and nothing else', () => {
    expect(
      find('Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual([...PROCESSES].sort());
  });

  it('has a Service for the gateway only', () => {
    expect(find('Service').map((s) => s.metadata.name)).toEqual(['gateway']);
  });

  it('protects and scales the gateway', () => {
    const pdb = find('PodDisruptionBudget', 'gateway')[0];
    expect(pdb).toBeDefined();
    const hpa = find('HorizontalPodAutoscaler', 'gateway')[0];
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway' });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const deployment = find('Deployment', 'gateway')[0];
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
  });

  describe.each(PROCESSES)('%s', (process) => {
    const deployment = () => find('Deployment', process)[0];
    const pod = () => deployment().spec.template.spec;
    const container = () => {
      expect(pod().containers).toHaveLength(1);
      return pod().containers[0];
    };
    /** Every variable the container gets and, where known, its value. */
    const env = () => {
      const values = new Map<string, string>();
      for (const source of container().envFrom ?? []) {
        const prefix = source.prefix ?? '';
        if (source.configMapRef) {
          const data = configMapValues.get(source.configMapRef.name);
          expect({ configMap: source.configMapRef.name, found: data !== undefined }).toEqual({ configMap: source.configMapRef.name, found: true });
          for (const [k, v] of Object.entries(data ?? {})) values.set(prefix + k, String(v));
        } else if (source.secretRef) {
          const keys = secrets.get(source.secretRef.name);
          expect({ secret: source.secretRef.name, found: keys !== undefined }).toEqual({ secret: source.secretRef.name, found: true });
          for (const k of keys ?? []) values.set(prefix + k, '<secret>');
        } else {
          throw new Error(`${process}: unsupported envFrom ${JSON.stringify(source)}`);
        }
      }
      for (const item of container().env ?? []) {
        const ref = item.valueFrom?.secretKeyRef ?? item.valueFrom?.configMapKeyRef;
        if (ref) {
          const keys = item.valueFrom.secretKeyRef ? secrets.get(ref.name) : configMaps.get(ref.name);
          expect({ variable: item.name, ref, found: keys?.includes(ref.key) ?? false }).toEqual({ variable: item.name, ref, found: true });
        }
        values.set(item.name, item.value ?? '<ref>');
      }
      return values;
    };
    const resolvePort = (port: string | number) => {
      if (typeof port === 'number') return port;
      const named = (container().ports ?? []).find((p: { name?: string }) => p.name === port);
      if (!named) throw new Error(`${process}: no container port named ${port}`);
      return named.containerPort as number;
    };

    it('runs its own entry point from the kustomize image', () => {
      checkCommand(`k8s ${process}`, process, container().command);
      expect(kustomization.images?.map((i) => i.name)).toContain(container().image);
    });

    it('sets every variable it reads and none it does not', () => checkVariables('k8s', process, new Set(env().keys())));

    it('selects its own pods', () => {
      expect(deployment().spec.template.metadata.labels).toMatchObject(deployment().spec.selector.matchLabels);
    });

    it('exposes the ports the process listens on and probes the health port', () => {
      const port = listenPort(process, env());
      const health = listenPort(process, env(), 'health');
      expect((container().ports ?? []).map((p: { containerPort: number }) => p.containerPort)).toEqual([...new Set([port, health])]);
      const probes = ['startupProbe', 'readinessProbe', 'livenessProbe'].map((k) => [k, container()[k]] as const).filter(([, p]) => p);
      expect(probes.map(([k]) => k)).toEqual(expect.arrayContaining(['readinessProbe', 'livenessProbe']));
      for (const [kind, probe] of probes) {
        const target = probe.httpGet ?? probe.tcpSocket;
        // An HTTP probe asks the health port; a TCP start-up probe may wait for the API port to open.
        if (probe.httpGet) expect({ kind, port: resolvePort(target.port) }).toEqual({ kind, port: health });
        else expect([port, health]).toContain(resolvePort(target.port));
      }
      // Liveness answers from the process alone, so no dependency outage restarts pods; readiness
      // checks the dependencies.
      expect(container().livenessProbe.httpGet?.path).toBe('/health/live');
      expect(container().readinessProbe.httpGet?.path).toBe('/health/ready');
      if (process === 'gateway') {
        for (const svc of find('Service', 'gateway')) {
          expect(svc.spec.selector).toEqual(deployment().spec.selector.matchLabels);
          for (const p of svc.spec.ports) expect(resolvePort(p.targetPort)).toBe(port);
        }
      }
    });

    it('runs locked down with modest resources', () => {
      expect(pod().securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod().securityContext.runAsUser).toBeGreaterThan(0);
      expect(container().securityContext).toMatchObject({
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const { requests, limits } = container().resources;
      for (const r of [requests, limits]) {
        expect(r.cpu).toBeDefined();
        expect(r.memory).toMatch(/^\d+Mi$/);
      }
      expect(parseInt(limits.memory, 10)).toBeLessThanOrEqual(1024);
    });
  });
});

import { spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, relative } from 'path';
import { parseAllDocuments, stringify } from 'yaml';

/**
 * What the deployment checks ask of rendered manifests, as functions of the objects `kubectl kustomize`
 * prints, so a test can run them on the shipped overlays (no problems) and on a broken variant it builds
 * (the problem named):
 * - internalExposure: an Ingress reaches only the gateway's API port, never the health port that serves
 *   /metrics and the full /health, and names no internal path;
 * - bodyLimitProblems: the Ingress body limit is at least the largest body the API takes;
 * - blockedPorts: every port a process is configured to connect to (PostgreSQL, NATS, Redis, the OTLP
 *   collector) is open to it in the NetworkPolicies.
 */

export const ROOT = join(__dirname, '..', '..');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: any;
}

interface Container {
  name: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } } }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string }; prefix?: string }>;
}

interface Workload {
  kind: string;
  name: string;
  labels: Record<string, string>;
  containers: Container[];
}

export function render(dir: string): K8sObject[] {
  const rendered = spawnSync('kubectl', ['kustomize', dir], { cwd: ROOT, encoding: 'utf8' });
  if (rendered.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${rendered.error?.message ?? rendered.stderr}`);
  return parseAllDocuments(rendered.stdout).map((doc) => doc.toJS() as K8sObject);
}

/**
 * Renders a variant: a kustomization written to a temporary directory, beside any files it names (e.g. a
 * component of its own), whose paths into the repository (`@/deploy/with-ingress`) are made relative, as
 * kustomize refuses absolute ones.
 */
export function renderVariant(kustomization: Record<string, unknown>, files: Record<string, unknown> = {}): K8sObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'crm-variant-'));
  try {
    const fromRepo = (value: unknown): unknown =>
      typeof value === 'string' && value.startsWith('@/') ? relative(dir, join(ROOT, value.slice(2))) : Array.isArray(value) ? value.map(fromRepo) : value;
    const write = (path: string, content: Record<string, unknown>) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), stringify(Object.fromEntries(Object.entries(content).map(([k, v]) => [k, fromRepo(v)]))));
    };
    write('kustomization.yaml', kustomization);
    for (const [path, content] of Object.entries(files)) write(path, content as Record<string, unknown>);
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function workloads(objects: K8sObject[]): Workload[] {
  return objects
    .filter((o) => ['Deployment', 'Job', 'StatefulSet', 'DaemonSet'].includes(o.kind))
    .map((o) => ({ kind: o.kind, name: o.metadata.name, labels: o.spec.template.metadata?.labels ?? {}, containers: o.spec.template.spec.containers }));
}

const selects = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  Object.entries(selector ?? {}).every(([k, v]) => labels[k] === v);

/** A container's environment as the pod sees it, values from ConfigMaps and Secrets of the render. */
function environment(objects: K8sObject[], container: Container): Map<string, string> {
  const data = (kind: string, name: string): Record<string, string> => {
    const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) return {};
    const decoded = Object.fromEntries(
      Object.entries((o.data ?? {}) as Record<string, string>).map(([k, v]) => [k, kind === 'Secret' ? Buffer.from(v, 'base64').toString() : v]),
    );
    return { ...decoded, ...(o.stringData ?? {}) };
  };
  const env = new Map<string, string>();
  for (const source of container.envFrom ?? []) {
    const values = source.configMapRef ? data('ConfigMap', source.configMapRef.name) : source.secretRef ? data('Secret', source.secretRef.name) : {};
    for (const [k, v] of Object.entries(values)) env.set((source.prefix ?? '') + k, String(v));
  }
  for (const item of container.env ?? []) {
    const ref = item.valueFrom?.secretKeyRef ?? item.valueFrom?.configMapKeyRef;
    const value = ref ? data(item.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap', ref.name)[ref.key] : item.value;
    if (value !== undefined) env.set(item.name, String(value));
  }
  return env;
}

function containerPort(container: Container, port: string | number): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** Ingresses that reach anything but the API port (PORT) of the pods behind them, or name an internal path. */
export function internalExposure(objects: K8sObject[]): string[] {
  const problems: string[] = [];
  for (const ingress of objects.filter((o) => o.kind === 'Ingress')) {
    const backends: Array<{ path: string; backend: any }> = [
      ...(ingress.spec.defaultBackend ? [{ path: '(default)', backend: ingress.spec.defaultBackend }] : []),
      ...(ingress.spec.rules ?? []).flatMap((rule: any) => (rule.http?.paths ?? []).map((p: any) => ({ path: p.path ?? '/', backend: p.backend }))),
    ];
    for (const { path, backend } of backends) {
      const where = `Ingress ${ingress.metadata.name} ${path}`;
      if (/^\/(metrics|health)(\/|$)/i.test(path)) problems.push(`${where}: names an internal path`);
      const service = objects.find((o) => o.kind === 'Service' && o.metadata.name === backend.service?.name);
      if (!service) {
        problems.push(`${where}: no Service ${backend.service?.name}`);
        continue;
      }
      const port = (service.spec.ports as Array<{ name?: string; port: number; targetPort?: string | number }>).find((p) =>
        backend.service.port.name !== undefined ? p.name === backend.service.port.name : p.port === backend.service.port.number,
      );
      if (!port) {
        problems.push(`${where}: Service ${service.metadata.name} has no port ${JSON.stringify(backend.service.port)}`);
        continue;
      }
      for (const pod of workloads(objects).filter((w) => w.kind === 'Deployment' && selects(service.spec.selector, w.labels))) {
        for (const container of pod.containers) {
          const target = containerPort(container, port.targetPort ?? port.port);
          if (!container.ports?.some((p) => p.containerPort === target)) continue;
          const api = Number(environment(objects, container).get('PORT'));
          if (target !== api) problems.push(`${where}: reaches ${pod.name} port ${target}, not its API port ${api}: /metrics and /health are served there`);
        }
      }
    }
  }
  return problems;
}

/** ingress-nginx's proxy-body-size in bytes: a size with an optional k, m or g; 0 is no limit; 1m when unset. */
export function nginxBodyLimit(value: string | undefined): number {
  const match = /^(\d+)([kmg]?)$/i.exec((value ?? '1m').trim());
  if (!match) throw new Error(`proxy-body-size '${value}' is not an nginx size`);
  const size = Number(match[1]) * 1024 ** ' kmg'.indexOf((match[2] || ' ').toLowerCase());
  return size === 0 ? Infinity : size;
}

/** Ingresses whose body limit refuses a body the API itself accepts (apiLimit bytes). */
export function bodyLimitProblems(objects: K8sObject[], apiLimit: number): string[] {
  return objects
    .filter((o) => o.kind === 'Ingress')
    .flatMap((ingress) => {
      const limit = nginxBodyLimit(ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size']);
      return limit >= apiLimit ? [] : [`Ingress ${ingress.metadata.name}: body limit ${limit} bytes is below the API's ${apiLimit}`];
    });
}

const DEFAULT_PORTS: Record<string, number> = { postgres: 5432, postgresql: 5432, nats: 4222, redis: 6379, rediss: 6379, http: 80, https: 443 };

/** Where each process connects, by the variables it reads: DATABASE_URL, NATS_URL, REDIS_URL, the OTLP endpoint. */
const CONNECTIONS = ['DATABASE_URL', 'NATS_URL', 'REDIS_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];

function urlPort(url: string): number | undefined {
  try {
    const parsed = new URL(url);
    return parsed.port ? Number(parsed.port) : DEFAULT_PORTS[parsed.protocol.replace(/:$/, '')];
  } catch {
    return undefined;
  }
}

/** Whether the NetworkPolicies let a pod with these labels open a TCP connection to `port` (peers aside). */
function egressAllowed(policies: K8sObject[], labels: Record<string, string>, port: number): boolean {
  const applying = policies.filter((p) => (p.spec.policyTypes ?? []).includes('Egress') && selects(p.spec.podSelector?.matchLabels, labels));
  if (applying.length === 0) return true;
  return applying.some((p) =>
    (p.spec.egress ?? []).some(
      (rule: { ports?: Array<{ port?: number | string; endPort?: number; protocol?: string }> }) =>
        !rule.ports ||
        rule.ports.length === 0 ||
        rule.ports.some(
          (x) =>
            (x.protocol ?? 'TCP') === 'TCP' &&
            (x.port === undefined || x.port === port || (typeof x.port === 'number' && x.endPort !== undefined && port >= x.port && port <= x.endPort)),
        ),
    ),
  );
}

/**
 * Connections the NetworkPolicies block: for every container of every workload, the port of each URL it
 * is configured with, and the collector's port (crm-network's OTLP_PORT) for every long-running process,
 * so that turning tracing on needs no policy change.
 */
export function blockedPorts(objects: K8sObject[]): string[] {
  const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
  const otlp = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'crm-network')?.data?.OTLP_PORT;
  const problems: string[] = [];
  for (const workload of workloads(objects)) {
    for (const container of workload.containers) {
      const env = environment(objects, container);
      const wanted: Array<[string, number | undefined]> = CONNECTIONS.filter((name) => env.get(name)).map((name) => [name, urlPort(env.get(name)!)]);
      if (workload.kind === 'Deployment' && otlp !== undefined) wanted.push(['crm-network OTLP_PORT', Number(otlp)]);
      for (const [what, port] of wanted) {
        if (port === undefined) problems.push(`${workload.name}/${container.name}: ${what} has no port`);
        else if (!egressAllowed(policies, workload.labels, port))
          problems.push(`${workload.name}/${container.name}: ${what} port ${port} is blocked by the NetworkPolicies`);
      }
    }
  }
  return [...new Set(problems)];
}

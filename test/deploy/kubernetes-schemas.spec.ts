import { spawnSync } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';

/**
 * What `kubectl kustomize` renders for the base and every overlay is checked against the Kubernetes API
 * schemas, the way a server would with `--validate=strict`, without a cluster:
 * - kubernetes-models validates each object against the API's OpenAPI schema (types, required fields,
 *   formats), and the Prometheus Operator's CRD schemas for PodMonitor and PrometheusRule;
 * - the TypeScript compiler checks each built-in object against kubernetes-types, the API's generated
 *   types, which rejects fields the API does not have (a misspelt `livenessProb` would otherwise pass).
 */

const ROOT = join(__dirname, '..', '..');
const RENDERED = ['k8s', 'deploy/cluster', 'deploy/with-ingress', 'deploy/with-monitoring'];

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
}

/** Where each apiVersion's models and types live; an object of any other apiVersion fails the test. */
const API_GROUPS: Record<string, { models: string; types?: string }> = {
  v1: { models: 'kubernetes-models/v1', types: 'kubernetes-types/core/v1' },
  'apps/v1': { models: 'kubernetes-models/apps/v1', types: 'kubernetes-types/apps/v1' },
  'batch/v1': { models: 'kubernetes-models/batch/v1', types: 'kubernetes-types/batch/v1' },
  'policy/v1': { models: 'kubernetes-models/policy/v1', types: 'kubernetes-types/policy/v1' },
  'autoscaling/v2': { models: 'kubernetes-models/autoscaling/v2', types: 'kubernetes-types/autoscaling/v2' },
  'networking.k8s.io/v1': { models: 'kubernetes-models/networking.k8s.io/v1', types: 'kubernetes-types/networking/v1' },
  // A CRD: schema-validated only, as kubernetes-types covers the built-in API.
  'monitoring.coreos.com/v1': { models: '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1' },
};

function render(dir: string): K8sObject[] {
  const rendered = spawnSync('kubectl', ['kustomize', dir], { cwd: ROOT, encoding: 'utf8' });
  if (rendered.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${rendered.error?.message ?? rendered.stderr}`);
  return parseAllDocuments(rendered.stdout).map((doc) => doc.toJS() as K8sObject);
}

const label = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;

/** Schema errors of one object, or the reason it could not be checked. */
function schemaErrors(object: K8sObject): string | undefined {
  const group = API_GROUPS[object.apiVersion];
  if (!group) return `no schema for apiVersion ${object.apiVersion}`;
  const Model = (require(group.models) as Record<string, new (data: unknown) => { validate(): void }>)[object.kind];
  if (!Model) return `no schema for ${object.apiVersion} ${object.kind}`;
  try {
    new Model(object).validate();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Compiles every built-in object as a typed constant; each diagnostic names an object and a field. */
function typeErrors(objects: K8sObject[]): string[] {
  const typed = objects.filter((o) => API_GROUPS[o.apiVersion]?.types);
  const source = [
    ...typed.map((o, i) => `import type { ${o.kind} as T${i} } from '${API_GROUPS[o.apiVersion].types}';`),
    ...typed.map((o, i) => `export const o${i}: T${i} = ${JSON.stringify(o, null, 1)};`),
  ].join('\n');
  const dir = mkdtempSync(join(tmpdir(), 'crm-k8s-types-'));
  try {
    const file = join(dir, 'manifests.ts');
    writeFileSync(file, source);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: [],
      baseUrl: ROOT,
      paths: { 'kubernetes-types/*': ['node_modules/kubernetes-types/*'] },
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
      const owner =
        typed[
          source
            .split('\n')
            .slice(0, line + 1)
            .filter((l) => l.startsWith('export const o')).length - 1
        ];
      return `${owner ? label(owner) : '?'}: ${text}`;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('rendered manifests against the Kubernetes API schemas', () => {
  it.each(RENDERED)('%s validates against the OpenAPI schemas of its kinds', (dir) => {
    const objects = render(dir);
    expect(objects.length).toBeGreaterThan(10);
    const errors = objects.map((o) => [label(o), schemaErrors(o)] as const).filter(([, e]) => e);
    expect({ dir, errors }).toEqual({ dir, errors: [] });
  });

  it.each(RENDERED)('%s uses only fields the API defines, with their types', (dir) => {
    expect({ dir, errors: typeErrors(render(dir)) }).toEqual({ dir, errors: [] });
  });

  describe('the checks themselves', () => {
    const deployment = () => render('k8s').find((o) => o.kind === 'Deployment')! as K8sObject & { spec: any };

    it('reject a wrong type and a missing required field', () => {
      const wrongType = deployment();
      wrongType.spec.template.spec.containers[0].ports[0].containerPort = 'http';
      expect(schemaErrors(wrongType)).toMatch(/containerPort must be integer/);
      const missing = deployment();
      delete missing.spec.selector;
      expect(schemaErrors(missing)).toMatch(/selector/);
    });

    it('reject a field the API does not have, naming it and its object', () => {
      const misspelt = deployment();
      misspelt.spec.template.spec.containers[0].livenessProb = misspelt.spec.template.spec.containers[0].livenessProbe;
      const errors = typeErrors([misspelt]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(new RegExp(`^${label(misspelt)}: .*livenessProb.* does not exist in type 'Container'`));
    });
  });
});

import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { readFile, rename, writeFile } from 'fs/promises';
import { runOpenApiDocumentPath } from './test-run';

/**
 * Checks every response a black-box test receives against the OpenAPI document the gateway serves:
 * the status must be one the operation documents, and a JSON body must match its schema (response views
 * list all their fields, so an undocumented field fails too). A test that gets an answer the document
 * does not describe fails, whatever it asserts itself.
 */
interface Response {
  $ref?: string;
  content?: Record<string, { schema?: unknown }>;
}
interface Operation {
  responses: Record<string, Response>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { responses?: Record<string, Response> };
}

/** Answers the server gives before any route is chosen, whatever the path: described in docs/api.md. */
const TRANSPORT_STATUSES = new Set([414, 431]);

/**
 * A method the path does not have is refused before routing: by the key check (401, 403, 429), by body
 * parsing (400, 413, 415), or with 405 and an Allow header; always in the error shape.
 */
const UNROUTED_STATUSES = new Set([400, 401, 403, 405, 413, 415, 429]);

export class OpenApiContract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly routes: Array<{ template: string; pattern: RegExp }>;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    addFormats(this.ajv);
    this.ajv.addSchema(document as object, 'openapi');
    this.routes = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}/?$`),
    }));
  }

  /** Why the response breaks the contract, or undefined when it keeps it. */
  check(method: string, url: string, status: number, contentType: string | null, body: unknown): string | undefined {
    if (TRANSPORT_STATUSES.has(status)) return undefined;
    const path = new URL(url).pathname;
    // `/contacts/merge` is also `/contacts/{id}`: take the template that has this method, if one does.
    const candidates = this.routes.filter((r) => r.pattern.test(path));
    const route = candidates.find((r) => this.document.paths[r.template][method.toLowerCase()]) ?? candidates[0];
    // A path the API does not have: its 404 is the generic not-found answer, checked elsewhere.
    if (!route) return undefined;
    const operations = this.document.paths[route.template];
    const operation = operations[method.toLowerCase()];
    if (!operation) {
      if (!UNROUTED_STATUSES.has(status)) return `${method} ${route.template} is not in the document but answered ${status}`;
      const validate = this.ajv.getSchema('openapi#/components/schemas/ErrorView')!;
      return validate(body) ? undefined : `${method} ${route.template} ${status} is not in the error shape`;
    }
    const listed = operation.responses[String(status)];
    if (!listed) return `${method} ${route.template} answered ${status}, which the document does not list (${Object.keys(operation.responses).join(', ')})`;
    const shared = listed.$ref?.replace('#/components/responses/', '');
    const response = shared ? this.document.components.responses?.[shared] : listed;
    if (!response) return `${listed.$ref} is not in the document`;
    if (body === undefined || !contentType?.includes('application/json')) return undefined;
    if (!response.content?.['application/json']) return `${method} ${route.template} ${status} has a JSON body the document does not describe`;
    const location = shared ? ['components', 'responses', shared] : ['paths', route.template, method.toLowerCase(), 'responses', String(status)];
    const validate = this.validator(location);
    if (validate(body)) return undefined;
    return `${method} ${route.template} ${status} body breaks the document: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`;
  }

  private validator(location: string[]): ValidateFunction {
    const pointer = [...location, 'content', 'application/json', 'schema'].map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.getSchema(`openapi#/${pointer}`);
      if (!validate) throw new Error(`No schema at ${pointer}`);
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

const contracts = new Map<string, Promise<OpenApiContract>>();

async function servedDocument(baseUrl: string): Promise<Document> {
  const cached = runOpenApiDocumentPath();
  if (cached) {
    const text = await readFile(cached, 'utf8').catch(() => undefined);
    if (text) return JSON.parse(text) as Document;
  }
  const res = await fetch(`${baseUrl}/openapi.json`);
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
  const text = await res.text();
  if (cached) {
    // Written whole under another name first, so a file read side by side is never half a document.
    const partial = `${cached}.${process.pid}`;
    await writeFile(partial, text);
    await rename(partial, cached);
  }
  return JSON.parse(text) as Document;
}

/** The contract of the gateway at baseUrl: the document it serves at GET /openapi.json, read once a run. */
export function contractOf(baseUrl: string): Promise<OpenApiContract> {
  let contract = contracts.get(baseUrl);
  if (!contract) {
    contract = servedDocument(baseUrl).then((document) => new OpenApiContract(document));
    contracts.set(baseUrl, contract);
    contract.catch(() => contracts.delete(baseUrl));
  }
  return contract;
}

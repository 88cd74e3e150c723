import { ApiClient, ApiResponse } from './api-client';

/** One route that takes a cursor, with its path parameters filled in by records that exist. */
export interface CursorRoute {
  method: 'GET' | 'POST';
  /** As the OpenAPI document names it: `/contacts/{id}/deals`. */
  template: string;
  path: string;
  /** Whether a GET list also takes `sort`. */
  sortable: boolean;
  /** Sends `cursor` (and, for a GET, `sort`) the way the route takes them. */
  send(api: ApiClient, cursor: string, sort?: string): Promise<ApiResponse>;
}

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: Array<Parameter | { $ref: string }>; requestBody?: unknown }>>;
  components?: Record<string, Record<string, unknown>>;
}

async function created(api: ApiClient, path: string, body: unknown): Promise<{ id: string; [key: string]: unknown }> {
  const res = await api.post(path, body);
  if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
  return res.body.data;
}

/**
 * Every route the running API's OpenAPI document lists with a `cursor` (a query parameter of a list or a
 * member of a query's body), so a route added later is covered without being named here. Creates one
 * record of each kind a path names, so that no route answers 404 before it reads the cursor. Webhook
 * subscriptions need a stack started with WEBHOOKS_ALLOW_INSECURE and WEBHOOKS_ALLOW_PRIVATE.
 */
export async function cursorRoutes(api: ApiClient): Promise<CursorRoute[]> {
  const doc = (await api.get<OpenApiDocument>('/openapi.json')).body;
  const resolve = <T>(node: T | { $ref: string }): T =>
    typeof node === 'object' && node !== null && '$ref' in node
      ? resolve(
          node.$ref
            .split('/')
            .slice(1)
            .reduce<any>((at, key) => at[key], doc),
        )
      : (node as T);

  const pipeline = await created(api, '/pipelines', {
    name: 'Cursor routes',
    stages: [
      { name: 'Open', type: 'open' },
      { name: 'Won', type: 'won' },
    ],
  });
  const stages = pipeline.stages as Array<{ id: string }>;
  const contact = await created(api, '/contacts', { email: `cursor.routes.${Date.now()}@example.com`, first_name: 'Cursor' });
  const company = await created(api, '/companies', { name: 'Cursor Routes', domain: `cursor-routes-${Date.now()}.example` });
  const user = await created(api, '/users', { name: 'Cursor Owner', email: `cursor.owner.${Date.now()}@example.com` });
  const deal = await created(api, '/deals', { name: 'Cursor deal', pipeline_id: pipeline.id, stage_id: stages[0].id, contact_id: contact.id, value: 100 });
  const activity = await created(api, '/activities', { type: 'note', subject: 'Cursor', contact_id: contact.id });
  const task = await created(api, '/tasks', { title: 'Cursor', deal_id: deal.id });
  const webhook = await created(api, '/webhooks', { name: 'Cursor routes', url: 'http://127.0.0.1:9/hook' });
  const product = await created(api, '/products', { name: 'Cursor product', sku: `CURSOR-${Date.now()}`, price: 1000, currency: 'USD' });
  const object = await created(api, '/objects', { name: 'Cursor thing', slug: 'cursor_things', fields: [{ name: 'title', type: 'string' }] });
  const record = await created(api, `/objects/${object.slug as string}/records`, { values: { title: 'one' } });
  const ids: Record<string, string> = {
    contacts: contact.id,
    companies: company.id,
    users: user.id,
    deals: deal.id,
    pipelines: pipeline.id,
    activities: activity.id,
    tasks: task.id,
    webhooks: webhook.id,
    records: record.id,
    products: product.id,
  };

  const routes: CursorRoute[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    const segments = template.split('/');
    const filled = () =>
      segments
        .map((segment, i) => {
          if (segment === '{slug}') return object.slug as string;
          if (!segment.startsWith('{')) return segment;
          const id = ids[segments[i - 1]];
          if (!id) throw new Error(`no record to fill ${segment} of ${template}`);
          return id;
        })
        .join('/');
    for (const [method, operation] of Object.entries(operations)) {
      const parameters = (operation.parameters ?? []).map((p) => resolve<Parameter>(p)).filter((p) => p.in === 'query');
      const names = new Set(parameters.map((p) => p.name));
      if (method === 'get' && names.has('cursor')) {
        const path = filled();
        // A value for each other required parameter (the words of GET /search), so the cursor is what is judged.
        const required = Object.fromEntries(parameters.filter((p) => p.required && p.name !== 'cursor').map((p) => [p.name, 'cursor']));
        routes.push({
          method: 'GET',
          template,
          path,
          sortable: names.has('sort'),
          send: (client, cursor, sort) => client.get(`${path}?${new URLSearchParams({ ...required, cursor, ...(sort ? { sort } : {}) })}`),
        });
      }
      const body = operation.requestBody ? resolve<{ content: Record<string, { schema: unknown }> }>(operation.requestBody as never) : undefined;
      const schema = body ? resolve<{ properties?: Record<string, unknown>; required?: string[] }>(Object.values(body.content)[0].schema as never) : undefined;
      if (method === 'post' && schema?.properties?.cursor) {
        const path = filled();
        // The least body the route accepts besides its cursor: an aggregation needs a metric.
        const rest = schema.required?.includes('metrics') ? { metrics: { n: { op: 'count' } } } : {};
        routes.push({ method: 'POST', template, path, sortable: false, send: (client, cursor) => client.post(path, { ...rest, cursor }) });
      }
    }
  }
  return routes;
}

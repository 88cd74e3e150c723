/**
 * The permission each route needs, written from docs/api.md ("Permissions" and "Related reads") rather
 * than read from the operation table the gateway enforces, so a wrong table entry fails the tests that
 * compare the two instead of passing as its own oracle.
 */
export interface ExpectedPermission {
  /** `<resource>:<action>`; `*:read` for the routes that answer what the caller may read. */
  needs: string;
  /** The other objects the answer shows, each needing `read` too. */
  reads: string[];
  /** GET /search and GET /changes: read on any object lets the caller in. */
  narrowed: boolean;
}

/** docs/api.md's resources, each the first segment of its routes' paths. */
const RESOURCES = [
  'contacts',
  'companies',
  'users',
  'activities',
  'tasks',
  'deals',
  'products',
  'pipelines',
  'events',
  'exports',
  'webhooks',
  'imports',
  'apikeys',
  'capture',
];

/** "Related reads": what each read under a record shows besides the record's own object, by hand. */
const SUB_RESOURCE_READS: Record<string, string[]> = {
  'GET /contacts/:id/deals': ['deals'],
  'GET /contacts/:id/activities': ['activities'],
  'GET /contacts/:id/tasks': ['tasks'],
  'GET /contacts/:id/companies': ['companies'],
  'GET /companies/:id/contacts': ['contacts'],
  'GET /deals/:id/contacts': ['contacts'],
  'GET /deals/:id/activities': ['activities'],
  'GET /deals/:id/tasks': ['tasks'],
  'GET /pipelines/:id/deals': ['deals'],
  'GET /pipelines/:pipeline_id/report': ['deals'],
  // The record's own history, stage moves, duplicates of the same object, and delivery attempts by event id.
  'GET /deals/:id/history': [],
  // A deal's own lines, which name their product by id only.
  'GET /deals/:id/line_items': [],
  'GET /contacts/:id/duplicates': [],
  'GET /companies/:id/duplicates': [],
  'GET /webhooks/:id/deliveries': [],
  // docs/exports.md: a file shows the export's objects, each needing read, checked like GET /exports/:id.
  'GET /exports/:id/files/:name': [],
};

/** A read sent as POST because its body does not fit a URL. */
const READING_POST = /\/(query|aggregate|duplicates)$/;

export function expectedPermission(method: string, path: string): ExpectedPermission {
  const route = `${method} ${path}`;
  const segments = path.split('/').filter(Boolean);
  const [first] = segments;
  if ((first === 'search' || first === 'changes') && method === 'GET') return { needs: '*:read', reads: [], narrowed: true };
  // docs/privacy.md, "Who may erase": erasing is privacy:delete, reading an erasure privacy:read.
  if (first === 'privacy') return { needs: method === 'GET' ? 'privacy:read' : 'privacy:delete', reads: [], narrowed: false };
  let resource: string;
  if (first === 'objects') resource = segments[2] === 'records' ? 'objects.:slug' : 'schema';
  else if (first === 'schema') resource = 'schema';
  else if (RESOURCES.includes(first)) resource = first;
  else throw new Error(`docs/api.md names no resource for ${route}`);

  // docs/exports.md: starting an export reads (exports:read, and read on each object it copies, checked by its own test).
  const read = method === 'GET' || (method === 'POST' && (READING_POST.test(path) || route === 'POST /exports'));
  const action = read ? 'read' : method === 'DELETE' || route === 'POST /contacts/merge' ? 'delete' : 'write';
  // A record's change history (`/<object>/:id/changes`) shows that record's own fields.
  const ownHistory = read && segments.at(-1) === 'changes';
  const underRecord = read && method === 'GET' && first !== 'objects' && segments.length >= 3 && segments[1].startsWith(':');
  if (underRecord && !ownHistory && !(route in SUB_RESOURCE_READS)) throw new Error(`docs/api.md does not say what ${route} shows`);
  return { needs: `${resource}:${action}`, reads: SUB_RESOURCE_READS[route] ?? [], narrowed: false };
}

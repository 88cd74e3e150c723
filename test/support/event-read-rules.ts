/**
 * What a key must be able to read to see an event of each type (GET /events, POST /events/query,
 * list_events) or to subscribe a webhook to it, written from docs/events.md ("Who sees which events"),
 * docs/api.md ("Permissions") and docs/products.md rather than read from EVENT_READS, the table the
 * services narrow by, so a wrong entry there fails the tests that compare the two instead of passing as
 * its own oracle.
 */

/** "its object": the resource of each object whose events are named after it. */
const OBJECT_OF_PREFIX: Record<string, string> = {
  contact: 'contacts',
  company: 'companies',
  deal: 'deals',
  activity: 'activities',
  task: 'tasks',
  pipeline: 'pipelines',
  // docs/products.md: product events need products:read; a line item is the deal's own and needs deals:read.
  product: 'products',
  line_item: 'deals',
};

/** Types whose resource the docs name one by one rather than by the type's first segment. */
const NAMED: Record<string, string[]> = {
  // An association event tells about both records.
  'contact.company_added': ['contacts', 'companies'],
  'contact.company_updated': ['contacts', 'companies'],
  'contact.company_removed': ['contacts', 'companies'],
  'deal.contact_added': ['deals', 'contacts'],
  'deal.contact_updated': ['deals', 'contacts'],
  'deal.contact_removed': ['deals', 'contacts'],
  'trigger.deal.stale': ['deals'],
  'import.completed': ['imports'],
  'webhook.disabled': ['webhooks'],
  // docs/events.md, "Erasure": it carries only the contact id and the erasure id, and needs contacts:read.
  'privacy.erased': ['contacts'],
  // About the log itself: every key that reads events sees them.
  'stream.gap': [],
  'system.restored': [],
};

/** Every resource some event type needs read on: the keys that lack exactly one of them. */
export const EVENT_RESOURCES = [
  'contacts',
  'companies',
  'deals',
  'activities',
  'tasks',
  'pipelines',
  'products',
  'imports',
  'apikeys',
  'webhooks',
  'schema',
  'objects',
];

/**
 * The resources an event of `type` needs read on. A custom object's record event needs read on that
 * object: `objects.<slug>` for the `object` its data names, or `objects` (every custom object) when the
 * event is not at hand, as for a subscription to the type.
 */
export function expectedEventReads(type: string, object?: string): string[] {
  if (type in NAMED) return NAMED[type];
  const [prefix] = type.split('.');
  if (prefix === 'object_record') return [object === undefined ? 'objects' : `objects.${object}`];
  if (prefix === 'object_type') return ['schema'];
  if (prefix === 'api_key') return ['apikeys'];
  if (prefix in OBJECT_OF_PREFIX) return [OBJECT_OF_PREFIX[prefix]];
  throw new Error(`the docs say nothing about who may read ${type} events`);
}

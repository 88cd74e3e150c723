import { RpcServiceName } from '../subjects';
import { aggregates } from './aggregate.ops';
import { activities, companies, contacts, contactsInternal, imports, importSteps, tasks, users } from './contacts.ops';
import { deals, dealsInternal, pipelines } from './deals.ops';
import { internal } from './operation';
import { capture, changes, dataExports, events, exportSteps, webhooks } from './platform.ops';
import { dealsSchema, objects, schema } from './schema.ops';
import { privacy, privacyInternal } from './privacy.ops';
import { lineItems, products } from './products.ops';
import { duplicates, search } from './search.ops';

/*
 * Every operation of the system, assembled from one file per domain. Each group is a resource as clients
 * see it (the gateway serves a group as one controller, in this order, and its keys are the OpenAPI
 * operation ids: `contacts_create`); each entry names the service that answers it. See
 * docs/architecture.md, "Adding an operation".
 */

/** `<service>.health`: answered by a service's RPC server itself, so "up" means a replica is handling requests. */
export function healthCheck(service: RpcServiceName) {
  return internal<Record<string, never>, { status: 'up'; service: RpcServiceName; outbox?: { pending: number; oldest_age_seconds: number } }>({
    service,
    name: `${service}.health`,
    idempotent: true,
  });
}

export const Ops = {
  contacts,
  companies,
  users,
  imports,
  importSteps,
  activities,
  tasks,
  deals,
  lineItems,
  products,
  pipelines,
  events,
  exports: dataExports,
  exportSteps,
  changes,
  webhooks,
  schema,
  capture,
  objects,
  aggregates,
  dealsSchema,
  contactsInternal,
  dealsInternal,
  search,
  duplicates,
  privacy,
  privacyInternal,
};

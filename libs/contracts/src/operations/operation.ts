import type { RelatedSummary } from '../related';
import type { ValidationWarning } from '../schema/field-types';
import type { ApiScope } from '../rpc';
import type { BatchReply } from '../batch/batch';
import type { ChangeVia } from '../changes/changes';
import type { RpcServiceName } from '../subjects';
import type { AggregateReply } from '../query/aggregate.dto';
import { derivePermission, RequiredPermission } from './permissions';

/** A class the request or reply is an instance of (class-validator rules, @ApiProperty views). */
export type Class<T = unknown> = abstract new (...args: never[]) => T;

/**
 * What an operation needs from the caller's key: `read`, `write` (changes), `capture` (the lead capture
 * endpoint), `any-key` (any valid key: the MCP endpoint offers tools by the key's scope) or `public` (no
 * key: probes, metrics, the API documents).
 */
export type Access = 'read' | 'write' | 'capture' | 'any-key' | 'public';

/** What each key scope is granted. */
const GRANTS: Record<ApiScope, ReadonlySet<Access>> = {
  read: new Set<Access>(['read']),
  'read-write': new Set<Access>(['read', 'write', 'capture']),
  'capture-only': new Set<Access>(['capture']),
};

/** The one scope rule: HTTP routes and MCP tools both ask it. */
export function scopeGrants(scope: ApiScope, access: Access): boolean {
  return access === 'public' || access === 'any-key' || GRANTS[scope].has(access);
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** `/deals/:id/stages/:stage_id` -> `{id: string; stage_id: string}`. */
export type PathParams<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & PathParams<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<never, string>;

/** The standard list answer. */
export interface PageOf<T> {
  data: T[];
  has_more: boolean;
  next_cursor?: string;
}

/** One record: `{data}`, with `included` summaries, soft-enforcement `warnings` or a one-time `secret` where the route adds them. */
export interface ResourceOf<T> {
  data: T;
  included?: RelatedSummary[];
  warnings?: ValidationWarning[];
  secret?: string;
}

/** How the success answer is shaped, for the OpenAPI document and the typed callers. */
export type ReplyShape =
  | { kind: 'resource'; view: Class; included?: boolean; warnings?: boolean; secret?: boolean }
  /** `projected`: with the request's `fields`, an item is `id` plus those paths instead of the view. */
  | { kind: 'page'; view: Class; projected?: boolean; meta?: Class }
  | { kind: 'none' }
  /** A batch write: `{data: [{index, status, data?, error?}]}`, one result per item, `data` being the view. */
  | { kind: 'batch'; view: Class; created?: Class }
  /** An aggregation (docs/aggregate.md): `{data: [view], totals, has_more, next_cursor}`. */
  | { kind: 'aggregate'; view: Class }
  /** A service-to-service answer: its type is the operation's type parameter, with no schema. */
  | { kind: 'internal' };

/** How an operation is offered to agents as an MCP tool (docs/mcp.md). */
export interface McpExposure {
  tool: string;
  title: string;
  description: string;
  /** Cannot be undone (a merge): agents ask before calling it. */
  destructive?: boolean;
  /** Body fields the tool sets itself and agents do not see (a batch tool's `operation`). */
  fixed?: Record<string, unknown>;
}

export interface HttpRoute {
  method: HttpMethod;
  /** Express-style, from the API root: `/contacts/:id`. */
  path: string;
  /** The success status. */
  status: number;
  summary: string;
  access: Access;
  /** The permission a caller needs (docs/api.md, "Permissions"); none for `public` and `any-key` routes. */
  permission?: RequiredPermission;
  /** Statuses the route answers beyond the shared ones, with what each means there. */
  errors?: Record<number, string>;
  /**
   * The gateway forwards the request to this operation's service unless the route is `custom`: then a
   * gateway controller implements it with @Route (a streamed upload, say), still described by this entry.
   */
  custom?: boolean;
}

/**
 * One operation of the system, declared once: its request name (the NATS pattern its service answers),
 * where HTTP reaches it, what the caller's key needs, the classes its input is validated with, the shape
 * of its answer, and how agents see it. The gateway's routes, the services' handlers, typed callers, scope
 * checks, OpenAPI and the MCP tools are all read from here.
 *
 * `P`, `Q`, `B` and `R` are the path parameters, query, body and reply as TypeScript sees them.
 */
export interface Operation<P = unknown, Q = unknown, B = unknown, R = unknown> {
  /** The service that answers it. */
  readonly service: RpcServiceName;
  /** `<service>.<resource>.<action>`: the NATS pattern, under the subjects its service subscribes to. */
  readonly name: string;
  readonly http?: HttpRoute;
  readonly query?: Class<Q>;
  readonly body?: Class<B>;
  readonly reply: ReplyShape;
  /** Repeating it has the effect of doing it once (reads, updates, deletes, a merge). */
  readonly idempotent: boolean;
  readonly mcp?: McpExposure;
  /**
   * The channel its changes are recorded under when it names its own (`batch`, `capture`, `merge`);
   * otherwise the request's (`api`, `mcp`, `import`). See docs/changes.md.
   */
  readonly via?: ChangeVia;
  /**
   * For routes whose owner depends on a path parameter (`/objects/:slug` is kept by the service that
   * keeps that object): the operation that answers for these parameters, or undefined for this one.
   */
  readonly routeBy?: (params: P) => AnyOperation | undefined;
  /** Carries the types only; never set. */
  readonly __types?: { params: P; query: Q; body: B; reply: R };
}

export type AnyOperation = Operation<any, any, any, any>;
type TypesOf<O> = O extends { __types?: infer T } ? NonNullable<T> : never;
export type ParamsOf<O> = TypesOf<O> extends { params: infer P } ? P : never;
export type QueryOf<O> = TypesOf<O> extends { query: infer Q } ? Q : never;
export type BodyOf<O> = TypesOf<O> extends { body: infer B } ? B : never;
export type ReplyOf<O> = TypesOf<O> extends { reply: infer R } ? R : never;

type ReplyOfShape<S, V> = S extends { kind: 'batch' }
  ? BatchReply<V>
  : S extends { kind: 'page'; projected: true }
    ? PageOf<V | ({ id: string } & Record<string, unknown>)>
    : S extends { kind: 'page'; meta: Class<infer M> }
      ? PageOf<V> & { meta?: M }
      : S extends { kind: 'page' }
        ? PageOf<V>
        : S extends { kind: 'none' }
          ? void
          : S extends { kind: 'aggregate' }
            ? AggregateReply
            : ResourceOf<V>;

export interface RouteSpec<Path extends string, Q, B, V, S extends ReplyShape, Svc extends RpcServiceName> {
  service: Svc;
  name: `${Svc}.${string}`;
  method: HttpMethod;
  path: Path;
  status?: number;
  summary: string;
  access: Access;
  query?: Class<Q>;
  body?: Class<B>;
  reply: S & { view?: Class<V> };
  idempotent?: boolean;
  errors?: Record<number, string>;
  custom?: boolean;
  /** Where the derived permission (derivePermission) is not the right one. */
  permission?: RequiredPermission;
  /** The other resources the answer shows, where its path does not name them (RequiredPermission.reads). */
  reads?: readonly string[];
  mcp?: McpExposure;
  via?: ChangeVia;
  routeBy?: (params: PathParams<Path>) => AnyOperation | undefined;
}

const DEFAULT_STATUS: Record<HttpMethod, number> = { GET: 200, POST: 201, PUT: 200, PATCH: 200, DELETE: 204 };

/**
 * An operation clients reach over HTTP. Its path parameters are typed from the path; its reply from the
 * view class and shape; reads, updates and deletes are idempotent unless said otherwise.
 */
export function route<Path extends string, S extends ReplyShape, V = unknown, Q = Record<string, never>, B = null, Svc extends RpcServiceName = RpcServiceName>(
  spec: RouteSpec<Path, Q, B, V, S, Svc>,
): Operation<PathParams<Path>, Q, B, ReplyOfShape<S, V>> {
  const { service, name, method, path, status, summary, access, errors, custom, query, body, reply, idempotent, mcp, via, routeBy } = spec;
  const derived = spec.permission ?? derivePermission(method, path, name, access);
  const permission = derived && spec.reads ? { ...derived, reads: spec.reads } : derived;
  return {
    service,
    name,
    http: {
      method,
      path,
      status: status ?? DEFAULT_STATUS[method],
      summary,
      access,
      ...(permission ? { permission } : {}),
      ...(errors ? { errors } : {}),
      ...(custom ? { custom } : {}),
    },
    ...(query ? { query } : {}),
    ...(body ? { body } : {}),
    reply,
    idempotent: idempotent ?? method !== 'POST',
    ...(mcp ? { mcp } : {}),
    ...(via ? { via } : {}),
    ...(routeBy ? { routeBy: routeBy as Operation<PathParams<Path>>['routeBy'] } : {}),
  } as Operation<PathParams<Path>, Q, B, ReplyOfShape<S, V>>;
}

/**
 * A request one service makes of another, with no HTTP route: `B` is what the caller sends, `R` what it
 * gets back. `body` names the class the answering service validates the body with, where it has one.
 */
export function internal<B, R, Svc extends RpcServiceName = RpcServiceName>(spec: {
  service: Svc;
  name: `${Svc}.${string}`;
  body?: Class<B>;
  idempotent?: boolean;
}): Operation<Record<never, string>, Record<string, never>, B, R> {
  return {
    service: spec.service,
    name: spec.name,
    ...(spec.body ? { body: spec.body } : {}),
    reply: { kind: 'internal' },
    idempotent: spec.idempotent ?? false,
  };
}

/** Reply shapes, as the table writes them. */
export const resource = <V>(view: Class<V>, extra: { included?: boolean; warnings?: boolean; secret?: boolean } = {}) =>
  ({ kind: 'resource', view, ...extra }) as const;
/** `meta`: a view of what the page says besides its items (GET /search's bounds), present only when it has something to say. */
export function page<V>(view: Class<V>): { readonly kind: 'page'; readonly view: Class<V> };
export function page<V, M>(view: Class<V>, extra: { meta: Class<M> }): { readonly kind: 'page'; readonly view: Class<V>; readonly meta: Class<M> };
export function page<V, M>(view: Class<V>, extra?: { meta: Class<M> }) {
  return { kind: 'page', view, ...extra } as const;
}
/** The answer of a query: pages of the view, or of `{id, ...paths}` when the query names its `fields`. */
export const projectedPage = <V>(view: Class<V>) => ({ kind: 'page', view, projected: true }) as const;
export const noContent = { kind: 'none' } as const;
export const aggregated = <V>(view: Class<V>) => ({ kind: 'aggregate', view }) as const;
/** `created`: the view a created item carries where the single create answers with less than the full view. */
export const batchResults = <V, C = V>(view: Class<V>, created?: Class<C>) =>
  ({ kind: 'batch', view, ...(created ? { created } : {}) }) as { kind: 'batch'; view: Class<V | C>; created?: Class<C> };

/** A read sent as POST because its body (a filter tree) does not fit a URL: it answers 200 and may be retried. */
export function readingPost<Path extends string, S extends ReplyShape, V, B, Svc extends RpcServiceName>(
  spec: Pick<RouteSpec<Path, Record<string, never>, B, V, S, Svc>, 'service' | 'name' | 'path' | 'summary' | 'body' | 'reply'>,
) {
  return route<Path, S, V, Record<string, never>, B, Svc>({ ...spec, method: 'POST', status: 200, access: 'read', idempotent: true });
}

import { Injectable, OnApplicationBootstrap, RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';

interface RouteEntry {
  pattern: RegExp;
  method: string;
}

/** The controller and method that serve a route: where its metadata (@Scopes, @Permission, ...) is read. */
export interface RouteTarget {
  controller: new (...args: unknown[]) => unknown;
  handler: (...args: unknown[]) => unknown;
}

/** `METHOD /path/:param`, lower-cased: the routes are case-insensitive. */
const routeKey = (method: string, path: string) => `${method} ${join(path)}`.toLowerCase();

function join(...parts: (string | undefined)[]): string {
  const path = parts
    .filter((p): p is string => !!p && p !== '/')
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/');
  return `/${path}`;
}

function toPattern(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

/**
 * Knows every mounted route, so a request for a known path with the wrong method answers 405 with an
 * Allow header instead of a misleading 404, and a Fastify hook can read the metadata of the route a
 * request matched before Nest runs it.
 */
@Injectable()
export class RouteIndex implements OnApplicationBootstrap {
  private routes: RouteEntry[] = [];
  private readonly targets = new Map<string, RouteTarget>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getControllers()) {
      const type = wrapper.metatype as (new (...args: unknown[]) => unknown) | undefined;
      if (!type) continue;
      const base = Reflect.getMetadata(PATH_METADATA, type) as string | string[] | undefined;
      const proto = type.prototype;
      for (const name of this.scanner.getAllMethodNames(proto)) {
        const handler = proto[name] as RouteTarget['handler'];
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (path === undefined || method === undefined) continue;
        for (const b of [base].flat()) {
          for (const p of [path].flat()) {
            const full = join(b, p);
            const verb = RequestMethod[method];
            this.routes.push({ pattern: toPattern(full), method: verb });
            this.targets.set(routeKey(verb, full), { controller: type, handler });
          }
        }
      }
    }
  }

  /** Methods allowed on `path`; empty when no route has this path. */
  allowedMethods(path: string): string[] {
    const methods = new Set(this.routes.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }

  /** The controller method behind a matched route: `url` is the route's pattern (`/apikeys/:id`), as Fastify's routeOptions.url gives it. */
  targetOf(method: string, url: string | undefined): RouteTarget | undefined {
    return url === undefined ? undefined : this.targets.get(routeKey(method, url));
  }
}

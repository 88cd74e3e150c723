import { DynamicModule, RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { offlineGatewayDeps } from '../gateway.app';
import { GatewayModule } from '../gateway.module';
import { PUBLIC_PATHS } from './access.hook';
import { NAMED_ONLY_RESOURCES, PERMISSION_RESOURCES, RequiredPermission } from '@crm/contracts';
import { accessForMethod, PERMISSION_METADATA, RouteAccess, SCOPES_METADATA, scopeGrants } from './scopes';

interface Route {
  route: string;
  access: RouteAccess | undefined;
  permission?: RequiredPermission;
}

/** The controllers of a module and of every module it imports, as Nest collects them. */
function controllersOf(module: Type | DynamicModule, seen = new Set<unknown>()): Type[] {
  if (seen.has(module)) return [];
  seen.add(module);
  const dynamic = 'module' in module ? module : undefined;
  const type = dynamic ? dynamic.module : (module as Type);
  const imports = [
    ...((Reflect.getMetadata('imports', type) as Array<Type | DynamicModule> | undefined) ?? []),
    ...((dynamic?.imports as Array<Type | DynamicModule>) ?? []),
  ];
  const own = [...((Reflect.getMetadata('controllers', type) as Type[] | undefined) ?? []), ...((dynamic?.controllers as Type[]) ?? [])];
  return [...own, ...imports.filter(Boolean).flatMap((imported) => controllersOf(imported, seen))];
}

/** Every route the gateway mounts, read from the same metadata Nest routes by. */
function gatewayRoutes(): Route[] {
  const controllers = controllersOf(GatewayModule.register(offlineGatewayDeps()));
  const routes: Route[] = [];
  for (const controller of controllers) {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '');
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      const handler = controller.prototype[name];
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (name === 'constructor' || method === undefined || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const path = [base, String(Reflect.getMetadata(PATH_METADATA, handler))].filter((p) => p && p !== '/').join('/');
      const access = (Reflect.getMetadata(SCOPES_METADATA, handler) ?? Reflect.getMetadata(SCOPES_METADATA, controller)) as RouteAccess | undefined;
      const permission = Reflect.getMetadata(PERMISSION_METADATA, handler) as RequiredPermission | undefined;
      routes.push({ route: `${RequestMethod[method]} /${path}`, access, ...(permission ? { permission } : {}) });
    }
  }
  return routes;
}

describe('route scopes', () => {
  const routes = gatewayRoutes();

  it('finds the routes', () => {
    expect(routes.length).toBeGreaterThan(60);
    expect(routes).toContainEqual({ route: 'POST /capture', access: 'capture', permission: { resource: 'capture', action: 'write' } });
  });

  it('declares @Scopes on every route', () => {
    expect(routes.filter((r) => r.access === undefined).map((r) => r.route)).toEqual([]);
  });

  it('declares a permission on every keyed route, of a known resource', () => {
    const resources = new Set<string>([...PERMISSION_RESOURCES, ...NAMED_ONLY_RESOURCES, '*', 'objects.:slug']);
    const keyed = routes.filter((r) => r.access !== 'public' && r.access !== 'any-key');
    expect(keyed.filter((r) => !r.permission || !resources.has(r.permission.resource)).map((r) => r.route)).toEqual([]);
    expect(routes.find((r) => r.route === 'DELETE /deals/:id')?.permission).toEqual({ resource: 'deals', action: 'delete' });
    expect(routes.find((r) => r.route === 'POST /contacts/merge')?.permission).toEqual({ resource: 'contacts', action: 'delete' });
    expect(routes.find((r) => r.route === 'POST /privacy/erasures')?.permission).toEqual({ resource: 'privacy', action: 'delete' });
  });

  it('opens exactly the paths the access hook lets through without a key', () => {
    const open = routes.filter((r) => r.access === 'public').map((r) => r.route.split(' ')[1]);
    expect(new Set(open)).toEqual(PUBLIC_PATHS);
  });

  it('asks for read on reads and for more on every change, except capture and MCP', () => {
    for (const { route, access } of routes) {
      if (access === 'public' || route === 'POST /capture' || route === 'POST /mcp') continue;
      // A query is a read sent as POST because its filter does not fit a URL; starting an export reads too.
      if (/^POST \/.+\/(query|aggregate|duplicates)$/.test(route) || route === 'POST /exports') {
        expect({ route, access }).toEqual({ route, access: 'read' });
        continue;
      }
      expect({ route, access }).toEqual({ route, access: accessForMethod(route.split(' ')[0]) });
    }
  });

  it('makes every read of a sub-resource say which other objects its answer shows', () => {
    // `/deals/:id/contacts` shows contacts: a route under a record that forgets to say so would let a
    // deals:read key read them (docs/api.md, "Related reads").
    const sub = routes.filter((r) => /^GET \/(?!objects\/)[a-z_]+\/:[a-z_]+\/[a-z_]+/.test(r.route));
    expect(sub.length).toBeGreaterThan(10);
    expect(sub.filter((r) => r.permission?.reads === undefined).map((r) => r.route)).toEqual([]);
    expect(routes.find((r) => r.route === 'GET /deals/:id/contacts')?.permission?.reads).toEqual(['contacts']);
    expect(routes.find((r) => r.route === 'GET /pipelines/:pipeline_id/report')?.permission?.reads).toEqual(['deals']);
    expect(routes.find((r) => r.route === 'GET /contacts/:id/changes')?.permission?.reads).toEqual([]);
  });

  it('grants each key scope what the API documents', () => {
    const grid = (['read', 'read-write', 'capture-only'] as const).map((scope) =>
      (['read', 'write', 'capture', 'any-key', 'public'] as const).map((access) => scopeGrants(scope, access)),
    );
    expect(grid).toEqual([
      [true, false, false, true, true],
      [true, true, true, true, true],
      [false, false, true, true, true],
    ]);
  });
});

import { DomainError, ErrorCode } from '@crm/common';
import { Access, describePermission, firstLacking, permissionsNeeded, RequiredPermission, scopeGrants } from '@crm/contracts';
import { CanActivate, CustomDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GatewayRequest, pathOf, Principal } from './request-context';

/** What a route needs from the caller's key: the same access levels as the operation table's. */
export type RouteAccess = Access;

export const SCOPES_METADATA = 'crm:scopes';
export const PERMISSION_METADATA = 'crm:permission';

/** Declares what a route needs from the caller's key; every route carries it (@Route sets it from the operation). */
export const Scopes = (access: RouteAccess): CustomDecorator<string> => SetMetadata(SCOPES_METADATA, access);

/** The permission a route needs (@Route sets it from the operation); a keyed route without one is refused. */
export const Permission = (permission: RequiredPermission | undefined): CustomDecorator<string> => SetMetadata(PERMISSION_METADATA, permission);

export { scopeGrants };

/** For a request no route takes (404/405): judged by its method, as a route with that method would be. */
export function accessForMethod(method: string): RouteAccess {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

/** Whether the key may do anything at all with `method`: a request no route takes is judged so. */
export function methodAllowed(principal: Principal, method: string): boolean {
  const action = accessForMethod(method) === 'read' ? 'read' : 'write';
  return principal.permissions.some((p) => p.endsWith(`:${action}`) || p.endsWith(':*'));
}

export function scopeForbidden(req: GatewayRequest, missing?: RequiredPermission): DomainError {
  const scope = req.principal?.scope;
  const caller = req.principal?.subject !== undefined ? 'token' : 'key';
  if (!missing) return new DomainError(ErrorCode.Forbidden, `This ${caller}'s scope (${scope}) does not allow ${req.method} ${pathOf(req)}.`);
  const needs = describePermission(missing);
  // A named scope's refusal reads as it always has; the details name the permission for every key and token.
  const message =
    scope === 'custom'
      ? `This ${caller} lacks the permission ${needs}, which ${req.method} ${pathOf(req)} needs.`
      : `This key's scope (${scope}) does not allow ${req.method} ${pathOf(req)}.`;
  return new DomainError(ErrorCode.Forbidden, message, [{ field: 'permission', code: 'missing_permission', message: needs }]);
}

/**
 * Checks the caller's permissions against the route's @Permission. The access hook runs before it:
 * it authenticates the key and spends from the rate limit, so a forbidden request is still counted.
 * A route without @Scopes, or a keyed one without @Permission, is refused (and the route-metadata test fails), never left open.
 */
@Injectable()
export class ScopesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(SCOPES_METADATA, targets);
    if (access === 'public') return true;
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    if (!req.principal || access === undefined) throw scopeForbidden(req);
    if (access === 'any-key') return true;
    const declared = this.reflector.getAllAndOverride<RequiredPermission | undefined>(PERMISSION_METADATA, targets);
    if (!declared) throw scopeForbidden(req);
    const lacking = firstLacking(req.principal.permissions, permissionsNeeded(declared, (req.params ?? {}) as Record<string, string>, req.body));
    if (lacking) throw scopeForbidden(req, lacking);
    return true;
  }
}

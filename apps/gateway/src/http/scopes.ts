import { DomainError, ErrorCode } from '@crm/common';
import { Access, scopeGrants } from '@crm/contracts';
import { CanActivate, CustomDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GatewayRequest, pathOf } from './request-context';

/** What a route needs from the caller's key: the same access levels as the operation table's. */
export type RouteAccess = Access;

export const SCOPES_METADATA = 'crm:scopes';

/** Declares what a route needs from the caller's key; every route carries it (@Route sets it from the operation). */
export const Scopes = (access: RouteAccess): CustomDecorator<string> => SetMetadata(SCOPES_METADATA, access);

export { scopeGrants };

/** For a request no route takes (404/405): judged by its method, as a route with that method would be. */
export function accessForMethod(method: string): RouteAccess {
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

export function scopeForbidden(req: GatewayRequest): DomainError {
  return new DomainError(ErrorCode.Forbidden, `This key's scope (${req.principal?.scope}) does not allow ${req.method} ${pathOf(req)}.`);
}

/**
 * Checks the caller's key scope against the route's @Scopes. The access hook runs before it:
 * it authenticates the key and spends from the rate limit, so a forbidden request is still counted.
 * A route without @Scopes is refused (and the route-metadata test fails), never left open.
 */
@Injectable()
export class ScopesGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const access = this.reflector.getAllAndOverride<RouteAccess | undefined>(SCOPES_METADATA, [context.getHandler(), context.getClass()]);
    if (access === 'public') return true;
    const req = context.switchToHttp().getRequest<GatewayRequest>();
    if (!req.principal || access === undefined || !scopeGrants(req.principal.scope, access)) throw scopeForbidden(req);
    return true;
  }
}

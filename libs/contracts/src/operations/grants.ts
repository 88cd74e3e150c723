import { PERMISSION_ACTIONS, PERMISSION_RESOURCES, PermissionAction, permits } from './permissions';

/**
 * What one permission stands for, one `<resource>:<action>` each: `*` is every resource of
 * PERMISSION_RESOURCES (`objects` among them, which stands for every custom object) or every action.
 */
export function permissionsStoodFor(permission: string): string[] {
  const colon = permission.indexOf(':');
  const resource = permission.slice(0, colon);
  const action = permission.slice(colon + 1);
  const resources = resource === '*' ? PERMISSION_RESOURCES : [resource];
  const actions: readonly string[] = action === '*' ? PERMISSION_ACTIONS : [action];
  return resources.flatMap((r) => actions.map((a) => `${r}:${a}`));
}

/**
 * The first permission among `wanted` that `held` does not allow, or undefined when `held` covers them all.
 * A wildcard is covered only when everything it stands for is, read as `permits` reads a request: a
 * caller holding `objects:read` covers `objects.invoices:read`, one holding `objects.invoices:read` does not
 * cover `objects:read`. No key or token can so hand on more than it holds.
 */
export function firstUngranted(held: readonly string[], wanted: readonly string[]): string | undefined {
  for (const permission of wanted) {
    const lacking = permissionsStoodFor(permission).find((p) => {
      const colon = p.indexOf(':');
      return !permits(held, p.slice(0, colon), p.slice(colon + 1) as PermissionAction);
    });
    if (lacking) return lacking;
  }
  return undefined;
}

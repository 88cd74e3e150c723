import { AnyOperation, Ops, permissionsNeeded } from '@crm/contracts';
import { expectedPermission } from '../support/permission-rules';

/**
 * The operation table against the permissions docs/api.md gives each route (test/support/permission-rules.ts,
 * written from the docs): the table is what the gateway enforces, and permissions-sweep.spec.ts checks the
 * running gateway against the same expectations.
 */
describe('the operation table against the documented permissions', () => {
  const routes = Object.values(Ops)
    .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
    .filter((op) => op.http && op.http.access !== 'public' && op.http.access !== 'any-key');

  it('covers every keyed route', () => {
    expect(routes.length).toBeGreaterThan(100);
  });

  it('asks each route for what the docs say, reads of what it shows included', () => {
    const wrong: unknown[] = [];
    for (const op of routes) {
      const { method, path, permission } = op.http!;
      const route = `${method} ${path}`;
      const expected = expectedPermission(method, path);
      if (!permission) {
        wrong.push({ route, declared: 'nothing', expected });
        continue;
      }
      const needed = permissionsNeeded(permission, { slug: ':slug' }, method === 'POST' ? {} : undefined);
      const actual = {
        needs: `${needed[0].resource}:${needed[0].action}`,
        reads: needed.slice(1).map((p) => p.resource),
        narrowed: permission.narrowed === true,
      };
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push({ route, actual, expected });
    }
    expect(wrong).toEqual([]);
  });

  it('needs delete for a batch whose operation is delete', () => {
    for (const op of routes.filter((o) => o.http!.path.endsWith('/batch'))) {
      const [needed] = permissionsNeeded(op.http!.permission!, { slug: 'things' }, { operation: 'delete' });
      expect({ route: op.http!.path, action: needed.action }).toEqual({ route: op.http!.path, action: 'delete' });
    }
  });
});

import { validationFailed } from '@crm/common';
import { Ops } from '@crm/contracts';
import type { McpTool } from './mcp-tools';
import { objectInput, read } from './record-tools';

const ROUTES = {
  contacts: { stored: Ops.duplicates.contact, draft: Ops.duplicates.contactDraft },
  companies: { stored: Ops.duplicates.company, draft: Ops.duplicates.companyDraft },
} as const;

/** find_duplicates: GET /<object>/:id/duplicates for a stored record, POST /<object>/duplicates for a draft (docs/search.md). */
export const FIND_DUPLICATES: McpTool = {
  name: 'find_duplicates',
  title: 'Find duplicates',
  description:
    'Likely duplicates of a contact or company, given its id or a draft (data: fields of its POST), best first with the matching rules (same email, phone or domain; similar name). Merge contacts with merge_contacts.',
  ...read,
  input: objectInput(
    {
      object: { enum: Object.keys(ROUTES) },
      id: { type: 'string', maxLength: 64 },
      data: { type: 'object' },
      min_score: { type: 'number', minimum: 0, maximum: 1 },
    },
    ['object'],
  ),
  run: (args, context) => {
    // An agent's argument: `toString` must not find Object's own properties.
    const routes = typeof args.object === 'string' && Object.hasOwn(ROUTES, args.object) ? ROUTES[args.object as keyof typeof ROUTES] : undefined;
    const given = (name: string) => args[name] !== undefined && args[name] !== null;
    const issues = [
      ...(routes ? [] : [{ field: 'object', code: 'invalid_value', message: 'object must be contacts or companies' }]),
      ...(given('id') === given('data')
        ? [{ field: 'id', code: 'invalid_value', message: 'give exactly one of id (a stored record) and data (a draft)' }]
        : []),
      ...(given('data') && (typeof args.data !== 'object' || Array.isArray(args.data))
        ? [{ field: 'data', code: 'invalid_value', message: 'data must be an object' }]
        : []),
    ];
    if (issues.length || !routes) throw validationFailed(issues);
    const query = given('min_score') ? { min_score: String(args.min_score) } : {};
    return given('id')
      ? context.call(routes.stored, { params: { id: String(args.id) }, query })
      : context.call(routes.draft, { params: {}, query, body: args.data });
  },
};

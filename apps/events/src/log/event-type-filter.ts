import { DomainError, ErrorCode } from '@crm/common';
import { EVENT_TYPES } from '@crm/contracts';

export interface EventTypeFilter {
  types: string[];
  prefixes: string[];
}

const RESOURCES = new Set(EVENT_TYPES.map((t) => t.split('.')[0]));

/**
 * Parses `type`: exact names from the event catalogue, or `resource.*` for every type of a resource
 * (`trigger.*` covers `trigger.deal.stale`). Anything else is a 400 naming the unknown value, so a
 * typo never silently matches nothing.
 */
export function parseEventTypeFilter(raw: string | undefined): EventTypeFilter | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const filter: EventTypeFilter = { types: [], prefixes: [] };
  for (const part of raw.split(',').map((p) => p.trim())) {
    if (part.endsWith('.*') && RESOURCES.has(part.slice(0, -2))) filter.prefixes.push(`${part.slice(0, -1)}`);
    else if ((EVENT_TYPES as readonly string[]).includes(part)) filter.types.push(part);
    else {
      const message = `type '${part}' is not a known event type; use names like contact.created or prefixes like contact.*`;
      throw new DomainError(ErrorCode.ValidationFailed, message, [{ field: 'type', code: 'invalid_value', message }]);
    }
  }
  return filter;
}

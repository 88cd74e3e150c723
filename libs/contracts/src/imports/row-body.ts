import { builtInEntry, ObjectEntry, slugsWith } from '../objects/registry';
import { describeWritable } from '../schema/describe';
import type { CustomFieldDefinition, FieldDefinition } from '../schema/field-types';
import type { ImportFormat, ImportObject } from './imports';

const CUSTOM_PREFIX = 'custom_fields.';
const METADATA_PREFIX = 'metadata.';
const NUMBER = /^-?\d+(\.\d+)?$/;

const typesOf = ({ create, update }: ObjectEntry) => new Map<string, FieldDefinition['type']>(describeWritable(create!, update).map((f) => [f.name, f.type]));
const BUILT_IN_TYPES = Object.fromEntries(slugsWith('importable').map((slug) => [slug, typesOf(builtInEntry(slug)!)])) as Record<
  ImportObject,
  Map<string, FieldDefinition['type']>
>;

/**
 * A CSV cell as the field's type wants it: numbers and booleans from their text, arrays and objects from
 * JSON. A cell that does not read as its type stays text, so validation names the field and the problem.
 */
function typed(type: string | undefined, cell: string): unknown {
  switch (type) {
    case 'number':
    case 'currency':
      return NUMBER.test(cell.trim()) ? Number(cell.trim()) : cell;
    case 'boolean':
      return cell === 'true' ? true : cell === 'false' ? false : cell;
    case 'array':
    case 'object':
      try {
        return JSON.parse(cell);
      } catch {
        return cell;
      }
    default:
      return cell;
  }
}

/**
 * The body of a single write from one staged row. NDJSON rows are JSON objects already. CSV columns are
 * named like the API fields; `custom_fields.<name>` and `metadata.<key>` columns fill those objects, a
 * `metadata` column holds a JSON object, and an empty cell means "not given".
 */
export function importRowBody(
  object: ImportObject,
  format: ImportFormat,
  values: Record<string, unknown>,
  customFields: readonly CustomFieldDefinition[],
): Record<string, unknown> {
  if (format === 'ndjson') return values;
  const types = BUILT_IN_TYPES[object];
  const custom = new Map(customFields.map((f) => [f.name, f.type]));
  const body: Record<string, unknown> = {};
  const nested = (key: string) => (body[key] ??= {}) as Record<string, unknown>;
  for (const [column, raw] of Object.entries(values)) {
    if (typeof raw !== 'string' || raw === '') continue;
    if (column.startsWith(CUSTOM_PREFIX)) {
      const name = column.slice(CUSTOM_PREFIX.length);
      nested('custom_fields')[name] = typed(custom.get(name), raw);
    } else if (column.startsWith(METADATA_PREFIX)) {
      nested('metadata')[column.slice(METADATA_PREFIX.length)] = raw;
    } else {
      body[column] = typed(column === 'metadata' ? 'object' : types.get(column), raw);
    }
  }
  return body;
}

import { QueryFieldInfo } from '@crm/contracts';

/**
 * An enum's values are written by whoever may change the schema, and every agent that describes the
 * object reads them: they appear only as JSON strings, each at most ENUM_VALUE_CHARS long and at most
 * ENUM_VALUES_LISTED of them in a description, never as prose. Paths, slugs and operators are SLUG_SHAPE or ours.
 */
const ENUM_VALUE_CHARS = 40;
const ENUM_VALUES_LISTED = 20;

const isShort = (value: string) => value.length <= ENUM_VALUE_CHARS;

/** The values as a JSON list, cut to its bounds, saying what was cut. */
function quotedValues(values: readonly string[]): string {
  const listed = values.slice(0, ENUM_VALUES_LISTED);
  const which = values.length > listed.length ? `${values.length} values, the first ${listed.length} as JSON` : 'values as JSON';
  const cut = listed.every(isShort) ? '' : `, longer ones cut to ${ENUM_VALUE_CHARS} characters`;
  return `${which}${cut}: ${JSON.stringify(listed.map((value) => (isShort(value) ? value : `${value.slice(0, ENUM_VALUE_CHARS - 1)}…`)))}`;
}

/** One query path as describe_object answers it. */
export interface PathDescription {
  path: string;
  /** Type, an enum's values (bounded JSON) and operators, in one line. */
  description: string;
  operators: string[];
  sortable: boolean;
  /** An enum's values as a closed list, only when none is too long to show whole; the service checks values either way. */
  enum?: string[];
}

/** An object's paths (fields, custom fields, relation paths) with what a filter, sort and fields may do with each. */
export function describePaths(fields: readonly QueryFieldInfo[]): PathDescription[] {
  return fields.map((field) => ({
    path: field.path,
    description: `${field.type}${field.values ? `; ${quotedValues(field.values)}` : ''}; operators: ${field.operators.join(' ')}`,
    operators: [...field.operators],
    sortable: field.sortable,
    ...(field.type === 'enum' && field.values?.every(isShort) ? { enum: [...field.values] } : {}),
  }));
}

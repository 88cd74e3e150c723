/** `2030-01-01T00:00:00.000Z`, or null. */
export function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

/** Escapes LIKE wildcards so a search term matches literally. */
export function likePattern(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

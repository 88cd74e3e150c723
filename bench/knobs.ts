/**
 * A benchmark's numeric knobs from the environment: each key is read from the variable `<prefix><key>`
 * and falls back to its default when unset. Read with Number(), not as integers, because some knobs are
 * fractions (SOAK_FRACTION).
 */
export function knobs<K extends string>(prefix: string, defaults: Record<K, number>): Record<K, number> {
  const read = (Object.entries(defaults) as Array<[K, number]>).map(([key, fallback]) => [key, Number(process.env[prefix + key] ?? fallback)]);
  return Object.fromEntries(read) as Record<K, number>;
}

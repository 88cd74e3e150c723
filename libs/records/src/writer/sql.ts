/**
 * The current time at millisecond precision. API timestamps carry milliseconds, so stored values are cut
 * to the same precision: a client that filters with `created_after=<a created_at it was shown>` then
 * gets exactly the rows after it, never the row itself.
 */
export const NOW_MS = `date_trunc('milliseconds', now())`;

/**
 * The rules every new migration keeps (docs/deployment.md, "Upgrading"), checked on its `up()` as written:
 * - an index is built or dropped CONCURRENTLY, which PostgreSQL allows only outside a transaction, so the
 *   class says `transaction = false` (an index on a table the migration itself creates is exempt);
 * - it sets `lock_timeout` (`withLockTimeout` from @crm/common, or `SET [LOCAL] lock_timeout`), so a lock it
 *   cannot have soon fails the migration instead of queueing every reader and writer of the table behind it;
 * - an `UPDATE … SET` outside a function body is batched: the statement has a LIMIT (an `id IN (SELECT …
 *   LIMIT n)` loop) or the migration calls `updateInBatches`. A whole-table UPDATE holds every row's lock
 *   to the end and writes the table's size in WAL in one transaction.
 * A heuristic over the source: it reads the SQL written in `up()`, not SQL a helper it calls builds.
 */

/** The newest migration of the last release: 1765600000100 (StageHistoryFlowAppends, commit a627576 of 27 Nov,
 * the release ending at cedc1b1). The next round's first migration, 1765700000000, came on 7 Dec. */
export const RELEASED_UP_TO = 1765600000100;

export interface MigrationClass {
  new (): { name?: string; transaction?: boolean; up: (...args: never[]) => unknown };
}

export function migrationName(cls: MigrationClass): string {
  return new cls().name ?? cls.name;
}

export function migrationTimestamp(cls: MigrationClass): number {
  const m = /(\d{13})$/.exec(migrationName(cls));
  if (!m) throw new Error(`migration ${migrationName(cls)} does not end in its 13-digit timestamp`);
  return Number(m[1]);
}

/** The SQL text of a function's body ($$ … $$, $fn$ … $fn$) is what the function runs later, not the migration. */
function withoutFunctionBodies(source: string): string {
  return source.replace(/\$([A-Za-z_]*)\$[\s\S]*?\$\1\$/g, '$$$$');
}

/** Comments on lines of their own and block comments say what the code does; they run nothing. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

export function migrationProblems(cls: MigrationClass): string[] {
  const instance = new cls();
  const source = withoutFunctionBodies(withoutComments(String(cls.prototype.up)));
  const problems: string[] = [];
  // A table the migration creates itself is empty and unseen by anyone until it commits: its indexes may
  // be built in the same transaction.
  const created = new Set([...source.matchAll(/CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)/gi)].map((m) => m[1].toLowerCase()));
  const indexStatements = (source.match(/\b(?:CREATE\s+(?:UNIQUE\s+)?INDEX|DROP\s+INDEX|REINDEX)\b(?:\s+CONCURRENTLY)?[^`;]*/gi) ?? [])
    .filter((statement) => !created.has(/\bON\s+(?:ONLY\s+)?"?(\w+)/i.exec(statement)?.[1]?.toLowerCase() ?? ''))
    .map((statement) => /^\S+\s+(?:UNIQUE\s+)?\S+(?:\s+CONCURRENTLY)?/i.exec(statement)![0]);
  if (indexStatements.some((s) => !/CONCURRENTLY$/i.test(s))) problems.push('builds or drops an index without CONCURRENTLY');
  if (indexStatements.some((s) => /CONCURRENTLY$/i.test(s)) && instance.transaction !== false) {
    problems.push('builds an index CONCURRENTLY but does not set transaction = false');
  }
  if (!/lock_timeout|withLockTimeout\(/.test(source)) problems.push('sets no lock_timeout');
  const batched = /updateInBatches\(/.test(source);
  for (const m of source.matchAll(/\bUPDATE\s+[\w."]+\s+SET\b[^`;]*/gi)) {
    if (!batched && !/\bLIMIT\b/i.test(m[0])) problems.push(`updates a whole table in one statement: ${m[0].slice(0, 80).replace(/\s+/g, ' ')}…`);
  }
  return problems;
}

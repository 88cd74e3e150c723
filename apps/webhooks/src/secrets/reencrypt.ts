import { DataSource } from 'typeorm';
import { SecretKeyring } from './secret-keyring';
import { rewriteSecrets, SECRET_COLUMNS } from './rewrite-secrets';

/**
 * Seals every stored signing secret that is not under the current key (older keys, and plain text left
 * from before encryption at rest) with the current key, a batch of rows per transaction, while the
 * service keeps running. Returns how many values were rewritten.
 */
export async function reencryptSecrets(dataSource: DataSource, keyring: SecretKeyring): Promise<number> {
  let total = 0;
  for (const column of SECRET_COLUMNS) {
    total += await rewriteSecrets(
      (work) => dataSource.transaction((m) => work(m)),
      column,
      (id, stored) => (keyring.isCurrent(stored) ? undefined : keyring.seal(id, keyring.open(id, stored))),
    );
  }
  return total;
}

/** How many stored secrets each key id seals; plain-text values count under null. */
export async function secretKeyUsage(dataSource: DataSource): Promise<{ keyId: string | null; count: number }[]> {
  const parts = SECRET_COLUMNS.map(
    (column) =>
      `SELECT CASE WHEN ${column} LIKE 'whsec\\_%' THEN NULL ELSE split_part(${column}, ':', 2) END AS key_id FROM subscriptions WHERE ${column} IS NOT NULL`,
  );
  const rows = (await dataSource.query(
    `SELECT key_id, count(*)::int AS count FROM (${parts.join(' UNION ALL ')}) stored GROUP BY key_id ORDER BY key_id NULLS FIRST`,
  )) as {
    key_id: string | null;
    count: number;
  }[];
  return rows.map((r) => ({ keyId: r.key_id, count: r.count }));
}

import { ObjectLiteral, Repository, SelectQueryBuilder } from 'typeorm';
import { decodeCursor, Page, pageSize, toPage } from './pagination';

/** One page of a list served oldest first by its text primary key `id`. */
export interface KeysetPage<E extends ObjectLiteral> {
  /** Rows after the cursor in id order, one more than the page holds; a list narrows it with andWhere. */
  readonly qb: SelectQueryBuilder<E>;
  /**
   * Reads the rows and presents them; the next cursor resumes after the last row served. `prepare` sees
   * the rows first, for a list that loads what its rows hold in one query rather than one per row.
   */
  read<T>(present: (row: E) => T, prepare?: (rows: E[]) => Promise<void>): Promise<Page<T>>;
}

/**
 * Starts a page of `list`, whose rows the query calls `alias`. The cursor is checked at once, so a list
 * that looks up its parent after starting the page still refuses a foreign cursor before it says 404.
 * Keyset paging keeps a deep page as cheap as the first: the primary key index finds where it resumes.
 */
export function keysetPage<E extends ObjectLiteral & { id: string }>(
  repository: Repository<E>,
  alias: string,
  list: string,
  query: { cursor?: string; limit?: number },
): KeysetPage<E> {
  const after = decodeCursor<string>(list, query.cursor, 'string');
  const size = pageSize(query);
  const qb = repository.createQueryBuilder(alias).orderBy(`${alias}.id`, 'ASC').limit(size + 1);
  if (after) qb.andWhere(`${alias}.id > :after`, { after });
  return {
    qb,
    read: async (present, prepare) => {
      const rows = await qb.getMany();
      if (prepare) await prepare(rows);
      return toPage(list, rows, size, (row) => row.id, present);
    },
  };
}

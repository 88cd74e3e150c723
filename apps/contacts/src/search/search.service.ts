import { CursorCodec, DomainError } from '@crm/common';
import {
  forbiddenRead,
  mayRead,
  objectResource,
  unreadableObject,
  Ops,
  PageOf,
  RequestContext,
  SEARCH_BUILT_IN_OBJECTS,
  SEARCHABLE_FIELD_TYPES,
  SearchHitView,
  SearchLimits,
  SearchMetaView,
  SearchPosition,
  SearchQuery,
  SearchSliceReply,
  slugsWith,
} from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { QueryBudget, SEARCH_HINT, SEARCH_SETTINGS, searchSlice, SearchTarget } from '@crm/records';
import { Inject, Injectable } from '@nestjs/common';
import { createHash } from 'crypto';
import { DataSource } from 'typeorm';
import { CONTACTS_SETTINGS, ContactsSettings } from '../contacts.settings';
import { customTarget, localTarget } from './search-targets';

/** Objects the deals service keeps and searches. */
const DEALS_OBJECTS = new Set<string>(slugsWith('searchable', 'deals'));

const isPosition = (key: unknown): key is SearchPosition =>
  Array.isArray(key) &&
  key.length === 3 &&
  typeof key[0] === 'number' &&
  key[0] > 0 &&
  key[0] <= 1 &&
  typeof key[1] === 'string' &&
  /^[a-z][a-z0-9_]{0,62}$/.test(key[1]) &&
  typeof key[2] === 'string' &&
  key[2].length <= 64;

/** The order of every page: score descending, then object, then id (code-point order, as the SQL's "C" collation). */
export const byRank = (a: SearchHitView, b: SearchHitView) =>
  b.score - a.score || (a.object < b.object ? -1 : a.object > b.object ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Both slices' meta as one (each list once, sorted), or undefined when neither says anything. */
function mergeMeta(...metas: Array<SearchMetaView | undefined>): SearchMetaView | undefined {
  const out: SearchMetaView = {};
  for (const key of ['skipped_words', 'capped_objects', 'typo_words'] as const) {
    const values = [...new Set(metas.flatMap((m) => m?.[key] ?? []))].sort();
    if (values.length) out[key] = values;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * GET /search (docs/search.md): this service ranks its own objects and asks the deals service for its
 * slice, both after the cursor's position in the one order, and serves the best `limit` of the two.
 */
@Injectable()
export class SearchService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rpc: RpcCaller,
    private readonly cursors: CursorCodec,
    @Inject(CONTACTS_SETTINGS) private readonly settings: ContactsSettings,
  ) {}

  async search(ctx: RequestContext, query: SearchQuery): Promise<PageOf<SearchHitView> & { meta?: SearchMetaView }> {
    const named = query.objects ? [...new Set(query.objects.split(','))] : undefined;
    if (named && named.length > SearchLimits.objects) throw DomainError.invalid('objects', `objects may name at most ${SearchLimits.objects} objects`);
    const customs = await this.customTargets();
    const known = new Set<string>([...SEARCH_BUILT_IN_OBJECTS, ...customs.keys()]);
    const unknown = named?.filter((o) => !known.has(o)) ?? [];
    if (unknown.length) {
      throw DomainError.invalid(
        'objects',
        `${unknown.map((o) => `'${o}'`).join(', ')} ${unknown.length === 1 ? 'is not an object' : 'are not objects'} that can be searched: use ${[...known].join(', ')}`,
        'unknown_object',
      );
    }
    // Naming an object the caller may not read is refused; searching everything searches what it may read.
    const unreadable = named && unreadableObject(ctx.readable, named);
    if (unreadable) throw forbiddenRead(unreadable, 'searching it');
    const objects = named ?? [...known].filter((o) => mayRead(ctx.readable, objectResource(o)));
    // A cursor belongs to one query over one set of objects.
    const list = `search:${createHash('sha256')
      .update(JSON.stringify([query.q, [...objects].sort()]))
      .digest('base64url')
      .slice(0, 16)}`;
    const after = this.cursors.decode(list, query.cursor, isPosition);
    const limit = query.limit ?? SearchLimits.defaultPage;
    const targets = objects.flatMap((o) => {
      const target = localTarget(o) ?? customs.get(o);
      return target ? [target] : [];
    });
    const input = { q: query.q, after, limit: limit + 1 };
    const dealsObjects = objects.filter((o) => DEALS_OBJECTS.has(o));
    // One budget for both slices: the deals service is asked to stop when this one does (docs/search.md).
    const budget = new QueryBudget(this.settings.queryTimeoutMs, SEARCH_HINT);
    const meta: SearchMetaView = {};
    const options = { wordCandidates: this.settings.searchWordCandidates, meta };
    const [local, deals] = await Promise.all([
      budget.run(this.dataSource, (run) => searchSlice(run, targets, input, options), SEARCH_SETTINGS),
      dealsObjects.length
        ? budget.ask((timeoutMs) => this.rpc.call(Ops.search.dealsSlice, ctx, { body: { ...input, objects: dealsObjects } }, { timeoutMs }))
        : ({ data: [] } as SearchSliceReply),
    ]);
    const hits = [...local, ...deals.data].sort(byRank);
    const data = hits.slice(0, limit);
    const last = data[data.length - 1];
    const hasMore = hits.length > limit;
    const said = mergeMeta(meta, deals.meta);
    return {
      data,
      has_more: hasMore,
      ...(hasMore ? { next_cursor: this.cursors.encode(list, [last.score, last.object, last.id]) } : {}),
      ...(said ? { meta: said } : {}),
    };
  }

  /** Active custom objects with at least one searchable field, by slug. */
  private async customTargets(): Promise<Map<string, SearchTarget>> {
    const types: Array<{ id: string; slug: string; name: string; fields: Array<{ name: string; type: string; searchable?: boolean }> }> =
      await this.dataSource.query(`SELECT id, slug, name, fields FROM object_types WHERE status = 'active' ORDER BY slug`);
    const targets = new Map<string, SearchTarget>();
    for (const type of types) {
      const fields = type.fields.filter((f) => f.searchable && (SEARCHABLE_FIELD_TYPES as readonly string[]).includes(f.type));
      if (fields.length) targets.set(type.slug, customTarget({ ...type, fields }));
    }
    return targets;
  }
}

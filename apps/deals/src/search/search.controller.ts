import { Ops, SearchMetaView, SearchSliceReply, SearchSliceRequest, slugsWith } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { QueryBudget, registryTarget, SEARCH_HINT, SEARCH_SETTINGS, searchSlice, SearchTarget } from '@crm/records';
import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';

/** Deals as GET /search reads them (docs/search.md); bench:search runs the same target straight on PostgreSQL. */
export const DEALS_SEARCH_TARGET: SearchTarget = registryTarget('deals');

/**
 * The searchable objects this service keeps, by slug, as their registry entries describe them (`search`):
 * an entry marked searchable without one fails when the service starts, and the search spec with it.
 */
const TARGETS: Record<string, SearchTarget> = Object.fromEntries(slugsWith('searchable', 'deals').map((slug) => [slug, registryTarget(slug)]));

/** The targets of the objects a search names that this service keeps, in the order named. */
export function searchTargetsOf(objects: readonly string[]): SearchTarget[] {
  return objects.filter((object) => Object.hasOwn(TARGETS, object)).map((object) => TARGETS[object]);
}

/** This service's part of GET /search, which the contacts service merges with its own. */
@Controller()
export class SearchController {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(DEALS_SETTINGS) private readonly settings: DealsSettings,
  ) {}

  @Handles(Ops.search.dealsSlice)
  async slice(@Payload('body') request: SearchSliceRequest): Promise<SearchSliceReply> {
    const targets = searchTargetsOf(request.objects);
    // The caller's deadline (the contacts service's budget) cuts this one short.
    const budget = new QueryBudget(this.settings.queryTimeoutMs, SEARCH_HINT);
    const meta: SearchMetaView = {};
    const options = { wordCandidates: this.settings.searchWordCandidates, meta };
    const data = await budget.run(this.dataSource, (run) => searchSlice(run, targets, request, options), SEARCH_SETTINGS);
    return { data, ...(Object.keys(meta).length ? { meta } : {}) };
  }
}

import { Ops, SearchMetaView, SearchSliceReply, SearchSliceRequest, SlugKeptBy, SlugWith } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { builtInTarget, QueryBudget, SEARCH_HINT, SEARCH_SETTINGS, searchColumn, searchSlice, SearchTarget } from '@crm/records';
import { Controller, Inject } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { DEALS_SETTINGS, DealsSettings } from '../deals.settings';

/** Deals as GET /search reads them (docs/search.md); bench:search runs the same target straight on PostgreSQL. */
export const DEALS_SEARCH_TARGET: SearchTarget = builtInTarget('deals', 't.name', 't.status', 't.name', [searchColumn('name', 'text')]);

/** The searchable objects this service keeps, by slug: one the registry marks searchable without a target here does not compile. */
const TARGETS: Record<SlugWith<'searchable'> & SlugKeptBy<'deals'>, SearchTarget> = { deals: DEALS_SEARCH_TARGET };

/** The targets of the objects a search names that this service keeps, in the order named. */
export function searchTargetsOf(objects: readonly string[]): SearchTarget[] {
  return objects.filter((object): object is keyof typeof TARGETS => Object.hasOwn(TARGETS, object)).map((object) => TARGETS[object]);
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

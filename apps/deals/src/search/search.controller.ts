import { Ops, SearchSliceRequest } from '@crm/contracts';
import { builtInTarget, Handles, searchColumn, searchSlice, SearchTarget } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';

/** Deals as GET /search reads them (docs/search.md); bench:search runs the same target straight on PostgreSQL. */
export const DEALS_SEARCH_TARGET: SearchTarget = builtInTarget('deals', 't.name', 't.status', 't.name', [searchColumn('name', 'text')]);

/** This service's part of GET /search, which the contacts service merges with its own. */
@Controller()
export class SearchController {
  constructor(private readonly dataSource: DataSource) {}

  @Handles(Ops.search.dealsSlice)
  async slice(@Payload('body') request: SearchSliceRequest) {
    const targets = request.objects.includes('deals') ? [DEALS_SEARCH_TARGET] : [];
    return { data: await this.dataSource.transaction((m) => searchSlice(m, targets, request)) };
  }
}

import { UpdateCompanyDto, UpdateContactDto, DuplicatesQuery, Ops, RequestContext, SearchQuery } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DuplicatesService } from './duplicates.service';
import { SearchService } from './search.service';

/** GET /search and the duplicate routes (docs/search.md). */
@Controller()
export class SearchController {
  constructor(
    private readonly searches: SearchService,
    private readonly duplicates: DuplicatesService,
  ) {}

  @Handles(Ops.search.search)
  search(@Payload('ctx') ctx: RequestContext, @Payload('query') query: SearchQuery) {
    return this.searches.search(ctx, query);
  }

  @Handles(Ops.duplicates.contact)
  contact(@Payload('params') { id }: { id: string }, @Payload('query') query: DuplicatesQuery) {
    return this.duplicates.ofContact(id, query);
  }

  @Handles(Ops.duplicates.contactDraft)
  contactDraft(@Payload('body') body: UpdateContactDto, @Payload('query') query: DuplicatesQuery) {
    return this.duplicates.ofContactDraft(body, query);
  }

  @Handles(Ops.duplicates.company)
  company(@Payload('params') { id }: { id: string }, @Payload('query') query: DuplicatesQuery) {
    return this.duplicates.ofCompany(id, query);
  }

  @Handles(Ops.duplicates.companyDraft)
  companyDraft(@Payload('body') body: UpdateCompanyDto, @Payload('query') query: DuplicatesQuery) {
    return this.duplicates.ofCompanyDraft(body, query);
  }
}

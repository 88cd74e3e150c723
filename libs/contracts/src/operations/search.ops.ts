import { UpdateCompanyDto, UpdateContactDto } from '../contacts';
import {
  DuplicatesQuery,
  DuplicateView,
  SEARCHED_OBJECTS_TEXT,
  SearchHitView,
  SearchMetaView,
  SearchQuery,
  SearchSliceReply,
  SearchSliceRequest,
} from '../search/search';
import { internal, page, route } from './operation';

/**
 * One search across objects (docs/search.md). The contacts service answers it: it keeps most objects, and
 * asks the deals service for its ranked slice, merging both in one order so one cursor walks them all.
 */
export const search = {
  search: route({
    service: 'contacts',
    name: 'contacts.search.search',
    method: 'GET',
    path: '/search',
    summary: 'Search every object by what a person remembers: words, word starts, typos, emails and their parts, phone numbers, ids',
    access: 'read',
    query: SearchQuery,
    reply: page(SearchHitView, { meta: SearchMetaView }),
    mcp: {
      tool: 'search',
      title: 'Find records by words',
      description: `Turns words into ids across ${SEARCHED_OBJECTS_TEXT} and searchable custom fields, as GET /search: accents and case ignored, word starts, typos in words of 4+ letters, emails or their parts, phones in any format, exact ids. Best first; pass next_cursor back to continue.`,
    },
  }),
  /** The deals service's part of the ranking. */
  dealsSlice: internal<SearchSliceRequest, SearchSliceReply>({ service: 'deals', name: 'deals.search.slice', idempotent: true }),
};

/** Possible duplicates of a contact or company, stored or drafted, with the rules that matched (docs/search.md). */
const duplicateRoute = <Path extends string, B>(
  name: `contacts.${string}`,
  method: 'GET' | 'POST',
  path: Path,
  many: string,
  body?: abstract new (...args: never[]) => B,
) =>
  route({
    service: 'contacts',
    name,
    method,
    path,
    status: 200,
    summary:
      method === 'GET'
        ? `List likely duplicates of one of the ${many}, best first, with the rules that matched`
        : `List ${many} a draft would duplicate, best first, with the rules that matched`,
    access: 'read',
    // Candidates are records of the same object.
    reads: [],
    query: DuplicatesQuery,
    ...(body ? { body } : {}),
    reply: page(DuplicateView),
    idempotent: true,
    ...(method === 'GET' ? { errors: { 404: 'No such record (`not_found`).' } } : {}),
  });

export const duplicates = {
  contact: duplicateRoute('contacts.duplicates.contact', 'GET', '/contacts/:id/duplicates', 'contacts'),
  contactDraft: duplicateRoute('contacts.duplicates.contact_draft', 'POST', '/contacts/duplicates', 'contacts', UpdateContactDto),
  company: duplicateRoute('contacts.duplicates.company', 'GET', '/companies/:id/duplicates', 'companies'),
  companyDraft: duplicateRoute('contacts.duplicates.company_draft', 'POST', '/companies/duplicates', 'companies', UpdateCompanyDto),
};

import { ApiProperty } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { Transform } from 'class-transformer';
import { slugsWith } from '../objects/registry';
import { CursorParam, LimitParam } from '../paging';

/** GET /search and the duplicate routes (docs/search.md). */
export const SearchLimits = { query: 200, defaultPage: 20, maxPage: 100, objects: 50 } as const;

/** The built-in objects GET /search covers besides custom objects, in registry order. */
export const SEARCH_BUILT_IN_OBJECTS = slugsWith('searchable');
/** The same, as prose: `contacts, companies, …, users`. */
export const SEARCHED_OBJECTS_TEXT = SEARCH_BUILT_IN_OBJECTS.join(', ');

/** Paging of the search and duplicate lists: a smaller default and cap than other lists, since each item is ranked. */
export class RankedPageQuery {
  @CursorParam()
  cursor?: string;

  @LimitParam(SearchLimits.maxPage)
  limit?: number;
}

export class SearchQuery extends RankedPageQuery {
  @ApiProperty({
    type: String,
    example: 'ada acme',
    description: 'What the person remembers: words, an email or its parts, a phone number, an id (1 to 200 characters)',
  })
  @IsString({ message: 'q is required' })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @MinLength(1, { message: 'q must be 1 to 200 characters' })
  @MaxLength(SearchLimits.query, { message: 'q must be 1 to 200 characters' })
  q!: string;

  @ApiProperty({
    type: String,
    required: false,
    example: 'contacts,companies',
    description: `Comma-separated objects to search: ${SEARCHED_OBJECTS_TEXT} or a custom object slug; default all`,
  })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  @Matches(/^[a-z][a-z0-9_]*(,[a-z][a-z0-9_]*)*$/, { message: 'objects is a comma-separated list of object names, e.g. objects=contacts,companies' })
  objects?: string;
}

export class SearchMatchView {
  @ApiProperty({ type: String, example: 'email' })
  field!: string;
  @ApiProperty({ type: String, example: 'ada@acme.com' })
  value!: string;
}

export class SearchHitView {
  @ApiProperty({ type: String, example: 'contacts' })
  object!: string;
  @ApiProperty({ type: String, example: 'cont_01jd0000000000000000000000' })
  id!: string;
  @ApiProperty({ type: String, example: 'Ada Lovelace' })
  title!: string;
  @ApiProperty({ type: String, nullable: true, example: 'ada@acme.com' })
  subtitle!: string | null;
  @ApiProperty({ type: Number, example: 0.95, description: 'Relevance in (0, 1]: an exact id 1, exact matches above prefix matches above typo matches' })
  score!: number;
  @ApiProperty({ type: () => [SearchMatchView] })
  matched!: SearchMatchView[];
}

/** What a search left out to stay within its bounds (docs/search.md, "Bounds"); absent when nothing was. */
export class SearchMetaView {
  @ApiProperty({
    type: [String],
    required: false,
    example: ['com'],
    description:
      "q's words, when every one of them is a whole word of more rows of an object than are ranked per word (SEARCH_WORD_CANDIDATES): those objects' rows holding them are listed with the word-start hits",
  })
  skipped_words?: string[];
  @ApiProperty({ type: [String], required: false, example: ['contacts'], description: 'The objects skipped_words applies to' })
  capped_objects?: string[];
  @ApiProperty({
    type: [String],
    required: false,
    example: ['lovelace', 'babbage', 'analytical'],
    description: 'When q has more words that may have typos than are looked up (3): the words that were, the longest',
  })
  typo_words?: string[];
}

/** Where a page of search results starts: after this hit in (score desc, object, id) order. */
export type SearchPosition = [score: number, object: string, id: string];

/** One service's part of GET /search: its hits after `after`, best first, at most `limit`. */
export interface SearchSliceRequest {
  q: string;
  objects: string[];
  after?: SearchPosition;
  limit: number;
}

export interface SearchSliceReply {
  data: SearchHitView[];
  /** Absent from a previous release's deals service. */
  meta?: SearchMetaView;
}

/** `min_score` of the duplicate routes. */
export class DuplicatesQuery extends RankedPageQuery {
  @ApiProperty({ type: Number, required: false, example: 0.5, description: 'Only duplicates scoring at least this (0 to 1, default 0.5)' })
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? (/^(0(\.\d{1,6})?|1(\.0{1,6})?|\.\d{1,6})$/.test(value) ? Number(value) : Number.NaN) : value))
  @Min(0, { message: 'min_score must be a number from 0 to 1' })
  @Max(1, { message: 'min_score must be a number from 0 to 1' })
  min_score?: number;
}

/** The rules a duplicate's `reasons` name (docs/search.md, "Duplicates"). */
export const DUPLICATE_RULES = ['same_normalized_email', 'same_phone', 'similar_name', 'same_domain'] as const;
export type DuplicateRule = (typeof DUPLICATE_RULES)[number];
/** The fields they compare: a contact's email, phone and name, a company's domain and name. */
export const DUPLICATE_FIELDS = ['email', 'phone', 'name', 'domain'] as const;
export type DuplicateField = (typeof DUPLICATE_FIELDS)[number];

export class DuplicateReasonView {
  @ApiProperty({ enum: DUPLICATE_FIELDS, example: 'email' })
  field!: DuplicateField;
  @ApiProperty({
    enum: DUPLICATE_RULES,
    example: 'same_normalized_email',
    description:
      'same_normalized_email: the same email without case, +tag and (Gmail) dots; same_phone: the same number with or without country code or trunk 0; similar_name: the same or a similar name (typos, nickname, first and last swapped, legal form); same_domain: the same company domain without scheme, path and www.',
  })
  rule!: DuplicateRule;
  @ApiProperty({
    type: Number,
    required: false,
    example: 0.88,
    description: 'For similar_name: the Jaro-Winkler similarity of the two names as compared (folded, without legal form), 0 to 1',
  })
  similarity?: number;
}

export class DuplicateView {
  @ApiProperty({ type: String, example: 'cont_01jd0000000000000000000000' })
  id!: string;
  @ApiProperty({ type: Number, example: 0.93 })
  score!: number;
  @ApiProperty({ type: () => [DuplicateReasonView] })
  reasons!: DuplicateReasonView[];
}

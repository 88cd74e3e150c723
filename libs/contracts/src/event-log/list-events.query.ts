import { PageQuery } from '../paging';
import { IsOptional, IsString, MaxLength } from 'class-validator';

export class ListEventsQuery extends PageQuery {
  /** One type, a comma-separated list, or `resource.*` prefixes, e.g. `contact.*,deal.won`. */
  @IsOptional()
  @IsString({ message: 'type must be a string' })
  @MaxLength(1000)
  type?: string;
}

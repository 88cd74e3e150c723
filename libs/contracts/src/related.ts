import { ApiProperty } from '@nestjs/swagger';
/** How one resource names another in `relationships` and `included`: `{type, id, name}`. */
export class RelatedSummary {
  @ApiProperty({ enum: ['contact', 'company', 'deal', 'pipeline', 'stage', 'user'] })
  type!: 'contact' | 'company' | 'deal' | 'pipeline' | 'stage' | 'user';
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
}

import { ApiProperty } from '@nestjs/swagger';
/** How one resource names another in `relationships` and `included`: `{type, id, name}`. */
export class RelatedSummary {
  @ApiProperty({ enum: ['contact', 'company', 'deal', 'pipeline', 'stage', 'user'] })
  type!: 'contact' | 'company' | 'deal' | 'pipeline' | 'stage' | 'user';
  @ApiProperty({ type: String })
  id!: string;
  /** Absent where the caller may not read the related record (docs/api.md, "Related reads"): it sees the id only. */
  @ApiProperty({ type: String, required: false, description: 'Absent where the caller may not read the related record: only its type and id are shown.' })
  name!: string;
}

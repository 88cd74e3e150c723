import { PageQuery } from '@crm/common';
import { ArrayMaxSize, IsArray, IsDefined, IsString, MaxLength } from 'class-validator';

/** Bodies of the service-to-service requests; their shapes are fixed in libs/contracts/src/deals. */
export class ListForContactBody extends PageQuery {
  @IsDefined()
  @IsString()
  @MaxLength(64)
  contact_id!: string;
}

export class ReassignContactBody {
  @IsDefined()
  @IsString()
  @MaxLength(64)
  from_contact_id!: string;

  @IsDefined()
  @IsString()
  @MaxLength(64)
  to_contact_id!: string;
}

export class ResolveDealsBody {
  @IsDefined()
  @IsArray()
  @ArrayMaxSize(500)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  deal_ids!: string[];
}

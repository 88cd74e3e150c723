import { ApiProperty, ApiPropertyOptional, IntersectionType, OmitType } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsDefined, IsOptional, IsString, Length } from 'class-validator';
import { IfPresent, IsIdOf, NonEmptyText, Rules } from '../dto-helpers';
import { FieldChanges } from '../contacts/views';
import { RelatedSummary } from '../related';

/*
 * Associations (docs/associations.md): many contacts per deal and many companies per contact, each with
 * an optional role and at most one primary. The deal's `contact_id` and the contact's `company_id` are
 * the primary association, kept equal to it in the same transaction.
 */

export const AssociationLimits = {
  /** Characters of a role. */
  role: 64,
  /** Labels one association type may define. */
  labels: 50,
} as const;

/** Each association type, the objects it joins and the service that keeps it. */
export const ASSOCIATION_TYPES = {
  deal_contacts: { from: 'deals', to: 'contacts', service: 'deals' },
  contact_companies: { from: 'contacts', to: 'companies', service: 'contacts' },
} as const;
export type AssociationType = keyof typeof ASSOCIATION_TYPES;

/** `role`: free text, or one of the type's labels once /schema defines some. Null clears it. */
const Role = () => Rules(IsOptional(), NonEmptyText(AssociationLimits.role));
const Primary = () => Rules(IfPresent(), IsBoolean({ message: '$property must be true or false' }));

export class AddDealContactDto {
  @ApiProperty({ type: String, example: 'cont_01jd5x0000000000000000000a' })
  @Rules(IsDefined({ message: 'contact_id is required' }), IsIdOf('cont', 'contact_id'))
  contact_id!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: AssociationLimits.role, example: 'champion' })
  @Role()
  role?: string | null;

  @ApiPropertyOptional({ type: Boolean, description: "Makes this the deal's primary contact (its `contact_id`)." })
  @Primary()
  is_primary?: boolean;
}

export class AddContactCompanyDto {
  @ApiProperty({ type: String, example: 'comp_01jd5x0000000000000000000a' })
  @Rules(IsDefined({ message: 'company_id is required' }), IsIdOf('comp', 'company_id'))
  company_id!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: AssociationLimits.role, example: 'advisor' })
  @Role()
  role?: string | null;

  @ApiPropertyOptional({ type: Boolean, description: "Makes this the contact's primary company (its `company_id`)." })
  @Primary()
  is_primary?: boolean;
}

/** PATCH of one association: `role` (null clears it) and `is_primary`. */
export class UpdateAssociationDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: AssociationLimits.role })
  @Role()
  role?: string | null;

  @ApiPropertyOptional({ type: Boolean, description: 'true makes it the primary association; false leaves the record without a primary.' })
  @Primary()
  is_primary?: boolean;
}

// A mixin's base must take any arguments (TypeScript's rule for mixins).
type Pair = abstract new (...args: any[]) => object;

/** An association as the API shows it: the pair's ids (`pair`), then its role, whether it is the primary one, and when it was made. */
function AssociationView<T extends Pair>(pair: T) {
  abstract class Association extends pair {
    @ApiProperty({ type: String, nullable: true })
    role!: string | null;
    @ApiProperty({ type: Boolean })
    is_primary!: boolean;
    @ApiProperty({ type: String, format: 'date-time' })
    created_at!: string;
  }
  return Association;
}

class DealContactPair {
  @ApiProperty({ type: String })
  deal_id!: string;
  @ApiProperty({ type: String })
  contact_id!: string;
}

export class DealContactView extends AssociationView(DealContactPair) {}

/** An item of GET /deals/:id/contacts: the association and who the contact is. */
export class DealContactItem extends DealContactView {
  @ApiProperty({ type: () => RelatedSummary })
  contact!: RelatedSummary;
}

class ContactCompanyPair {
  @ApiProperty({ type: String })
  contact_id!: string;
  @ApiProperty({ type: String })
  company_id!: string;
}

export class ContactCompanyView extends AssociationView(ContactCompanyPair) {}

/** An item of GET /contacts/:id/companies. */
export class ContactCompanyItem extends ContactCompanyView {
  @ApiProperty({ type: () => RelatedSummary })
  company!: RelatedSummary;
}

/** An item of GET /companies/:id/contacts. */
export class CompanyContactItem extends ContactCompanyView {
  @ApiProperty({ type: () => RelatedSummary })
  contact!: RelatedSummary;
}

/** An association type as GET /schema lists it. */
export class AssociationTypeView {
  @ApiProperty({ enum: Object.keys(ASSOCIATION_TYPES) })
  type!: AssociationType;
  @ApiProperty({ type: String, example: 'deals' })
  from!: string;
  @ApiProperty({ type: String, example: 'contacts' })
  to!: string;
  @ApiProperty({ type: [String], description: 'The roles allowed; empty means any role of up to 64 characters.' })
  labels!: string[];
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

export class UpdateAssociationTypeDto {
  @ApiProperty({ type: [String], maxItems: AssociationLimits.labels, example: ['champion', 'decision_maker', 'user'] })
  @Rules(
    IsDefined({ message: 'labels is required' }),
    IsArray({ message: 'labels must be an array of strings' }),
    ArrayMaxSize(AssociationLimits.labels, { message: `labels must hold at most ${AssociationLimits.labels} labels` }),
    IsString({ each: true, message: 'each label must be a string' }),
    Length(1, AssociationLimits.role, { each: true, message: `each label must be 1 to ${AssociationLimits.role} characters` }),
    ArrayUnique({ message: 'labels must not repeat' }),
  )
  labels!: string[];
}

/** Data of deal.contact_added and deal.contact_removed: the association as it was added or as it was before it went. */
export class DealContactEventData extends OmitType(DealContactView, ['created_at'] as const) {}

/** Data of deal.contact_updated: the association now, and which of role and is_primary changed from what. */
export class DealContactUpdatedData extends IntersectionType(DealContactEventData, FieldChanges) {}

/** Data of contact.company_added and contact.company_removed. */
export class ContactCompanyEventData extends OmitType(ContactCompanyView, ['created_at'] as const) {}

/** Data of contact.company_updated. */
export class ContactCompanyUpdatedData extends IntersectionType(ContactCompanyEventData, FieldChanges) {}

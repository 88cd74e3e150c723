import { ErrorCode } from '@crm/common';
import { ApiProperty } from '@nestjs/swagger';

export class FieldIssueView {
  @ApiProperty({ type: String, description: 'The input field, dotted for nested fields.' })
  field!: string;
  @ApiProperty({ type: String, description: 'Machine-readable, e.g. `required`, `unknown_field`, `invalid_value`.' })
  code!: string;
  @ApiProperty({ type: String })
  message!: string;
}

export class ErrorDetailView {
  @ApiProperty({ enum: Object.values(ErrorCode) })
  code!: string;
  @ApiProperty({ type: String })
  message!: string;
  @ApiProperty({ type: () => [FieldIssueView], required: false })
  details?: FieldIssueView[];
}

/** Every error answer: `{error: {code, message, details?}}`. */
export class ErrorView {
  @ApiProperty({ type: () => ErrorDetailView })
  error!: ErrorDetailView;
}

import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

// A mixin's base must take any arguments (TypeScript's rule for mixins).
type Fields = abstract new (...args: any[]) => object;

/**
 * The payload of an object's created, updated and deleted events: `fields`, then what only an update
 * carries, the changed fields with their values before and after (by field name, or by value key for a
 * custom object's record). These come last, as the event documents list them.
 */
export function WithUpdateChanges<T extends Fields>(fields: T) {
  abstract class UpdateChanges extends fields {
    @ApiProperty({ type: [String], required: false })
    changed?: string[];
    @ApiPropertyOptional({ type: 'object', additionalProperties: true })
    previous?: Record<string, unknown>;
    @ApiPropertyOptional({ type: 'object', additionalProperties: true })
    current?: Record<string, unknown>;
  }
  return UpdateChanges;
}

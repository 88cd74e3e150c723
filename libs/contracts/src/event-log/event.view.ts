import { ApiProperty } from '@nestjs/swagger';
import { EVENT_TYPES } from '../events';

/** One entry of GET /events: the event as the log stored it (docs/events.md lists each type's data). */
export class EventView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ enum: EVENT_TYPES })
  type!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  occurred_at!: string;
  @ApiProperty({ type: 'object', additionalProperties: true })
  data!: Record<string, unknown>;
}

import { ApiProperty } from '@nestjs/swagger';
import { ChangeActorView, CHANGE_VIAS, ChangeVia } from '../changes/changes';
import { EVENT_TYPES } from '../events';

/** One entry of GET /events: the event as the log stored it (docs/events.md lists each type's data). */
export class EventView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ enum: EVENT_TYPES })
  type!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  occurred_at!: string;
  @ApiProperty({
    type: ChangeActorView,
    nullable: true,
    description: 'Who made the change: the API key, its team member, or the system. Null on events logged before events carried it.',
  })
  actor!: ChangeActorView | null;
  @ApiProperty({ enum: CHANGE_VIAS, nullable: true, description: 'The channel the change came through. Null on events logged before events carried it.' })
  via!: ChangeVia | null;
  @ApiProperty({ type: String, nullable: true, description: 'The X-Request-Id of the request that made the change; null for what the system did on its own.' })
  request_id!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  data!: Record<string, unknown>;
}

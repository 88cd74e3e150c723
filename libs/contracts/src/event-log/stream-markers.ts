import { ApiProperty } from '@nestjs/swagger';

/**
 * `stream.gap`: the event log found events missing for good, after a stream reset or a reader that was down
 * longer than the stream keeps events, that no producing service still held (docs/operations.md, "Stream
 * reset"). Events between the two sequences of the old stream are not in the log.
 */
export class StreamGapData {
  @ApiProperty({ type: String, description: 'Why: replaced (the stream was made again) or truncated (events aged out before they were read).' })
  reason!: string;
  @ApiProperty({ type: String, description: 'The identity (creation time) of the stream the events were on.' })
  stream!: string;
  @ApiProperty({ type: Number, description: 'The first stream sequence that may be missing.' })
  from_seq!: number;
  @ApiProperty({ type: Number, description: 'The last stream sequence that may be missing.' })
  to_seq!: number;
  @ApiProperty({ type: Number, description: 'How many events of that range no service could send again.' })
  missing!: number;
}

/**
 * `system.restored`: the databases were restored to an earlier point and reconciled (docs/operations.md,
 * "Restore"). Events after the restored checkpoint up to `skipped_to_seq` were of changes the restore undid,
 * or were sent again from the restored outboxes; anything received before this marker about a change made
 * after the restore point no longer holds.
 */
export class SystemRestoredData {
  @ApiProperty({ type: String, description: 'The identity (creation time) of the stream read on.' })
  stream!: string;
  @ApiProperty({ type: Number, description: 'The first stream sequence not read from the stream.' })
  skipped_from_seq!: number;
  @ApiProperty({ type: Number, description: 'The last stream sequence not read from the stream; reading goes on after it.' })
  skipped_to_seq!: number;
}

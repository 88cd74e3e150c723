import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { DateTimeFilter } from '../dto-helpers';
import { PageQuery } from '../paging';
import type { ReadableObjects } from '../operations/readable';

/** How a change reached the system (docs/changes.md). */
export const CHANGE_VIAS = ['api', 'batch', 'import', 'mcp', 'capture', 'merge', 'system'] as const;
export type ChangeVia = (typeof CHANGE_VIAS)[number];

export const ACTOR_TYPES = ['api_key', 'user', 'subject', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

export const CHANGE_ACTIONS = ['created', 'updated', 'deleted', 'merged'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

/**
 * Who made a change: the API key, the team member the key (or bearer token) belongs to, a bearer token's
 * subject that is no team member's external_id, or the system itself (then `id` names the part of the
 * system that acted, such as `stale_deals`).
 */
export interface ChangeActor {
  type: ActorType;
  id: string | null;
}

/** Who made a change, through which channel, in answer to which request: carried on every event and change entry. */
export interface ChangeOrigin {
  actor: ChangeActor;
  via: ChangeVia;
  request_id: string | null;
}

export class ChangeActorView implements ChangeActor {
  @ApiProperty({ enum: ACTOR_TYPES })
  type!: ActorType;
  @ApiProperty({ type: String, nullable: true, description: "`key_…`, `user_…`, a bearer token's `sub`, or for the system the job that acted" })
  id!: string | null;
}

/** One entry of a change history: GET /changes and GET /<object>/:id/changes. */
export class ChangeView {
  @ApiProperty({ type: String, example: 'chg_01jd0000000000000000000000' })
  id!: string;
  @ApiProperty({ type: String, description: 'The object slug: contacts, companies, deals, pipelines, activities, tasks, users or a custom object' })
  object!: string;
  @ApiProperty({ type: String })
  record_id!: string;
  @ApiProperty({ enum: CHANGE_ACTIONS })
  action!: ChangeAction;
  @ApiProperty({ type: [String], description: 'Field paths: names, or custom_fields.<name> / values.<name> for custom values' })
  changed!: string[];
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  previous!: Record<string, unknown> | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  current!: Record<string, unknown> | null;
  @ApiProperty({ type: ChangeActorView })
  actor!: ChangeActorView;
  @ApiProperty({ enum: CHANGE_VIAS })
  via!: ChangeVia;
  @ApiProperty({ type: String, nullable: true })
  request_id!: string | null;
  @ApiProperty({ type: String, format: 'date-time' })
  occurred_at!: string;
}

export const ChangeLimits = {
  /** A field path: a field name, or `custom_fields.<name>` / `values.<name>`. */
  path: 200,
  id: 64,
} as const;

/** GET /<object>/:id/changes. */
export class RecordChangesQuery extends PageQuery {
  /** Keeps the entries that touch this path (or a path under it: `custom_fields` matches `custom_fields.tier`). */
  @IsOptional()
  @IsString({ message: 'field must be a string' })
  @MaxLength(ChangeLimits.path, { message: `field must be at most ${ChangeLimits.path} characters` })
  @Matches(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$/, { message: 'field must be a field name, or custom_fields.<name> / values.<name>' })
  field?: string;
}

/** GET /changes: the log across every object. */
export class ListChangesQuery extends PageQuery {
  @IsOptional()
  @IsString({ message: 'object must be a string' })
  @MaxLength(ChangeLimits.id, { message: `object must be at most ${ChangeLimits.id} characters` })
  @Matches(/^[a-z][a-z0-9_]*$/, { message: 'object must be an object slug, such as contacts or deals' })
  object?: string;

  @IsOptional()
  @IsString({ message: 'record_id must be a string' })
  @MaxLength(ChangeLimits.id, { message: `record_id must be at most ${ChangeLimits.id} characters` })
  @Matches(/^[a-z]+_[0-9a-z]+$/, { message: 'record_id must be a record id, such as cont_…' })
  record_id?: string;

  @IsOptional()
  @IsString({ message: 'actor_id must be a string' })
  @MaxLength(ChangeLimits.id, { message: `actor_id must be at most ${ChangeLimits.id} characters` })
  @Matches(/^(key|user)_[0-9a-z]+$/, { message: 'actor_id must be an API key id (key_…) or a user id (user_…)' })
  actor_id?: string;

  @IsOptional()
  @IsIn(CHANGE_VIAS as unknown as string[], { message: `via must be one of ${CHANGE_VIAS.join(', ')}` })
  via?: ChangeVia;

  @DateTimeFilter()
  created_after?: string;

  @DateTimeFilter()
  created_before?: string;
}

/** What a service answers for GET /changes: its own entries after the cursor's id, oldest first. */
export interface ChangeSlice {
  data: ChangeView[];
  has_more: boolean;
}

/** The filters of GET /changes as one service applies them; `after` is the id the page resumes after. */
export interface ChangeSliceRequest {
  filters: Omit<ListChangesQuery, 'cursor' | 'limit'>;
  after?: string;
  limit: number;
  /** The objects the caller may read (readableObjects); absent: every object. */
  readable?: ReadableObjects;
}

import { ApiProperty } from '@nestjs/swagger';
import { DELIVERY_STATUSES, DeliveryStatus, WEBHOOK_STATUSES, WebhookStatus } from './webhook.dto';

/** A subscription as clients see it. The signing secret is never part of it. */
export class WebhookView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  name!: string;
  @ApiProperty({ type: String })
  url!: string;
  /** null: every event type. */
  @ApiProperty({ type: [String], nullable: true })
  event_types!: string[] | null;
  /** null: every event of event_types; otherwise only those it holds for (docs/webhooks.md). */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'A QueryExpression over the event as delivered; null: none.' })
  filter!: Record<string, unknown> | null;
  @ApiProperty({ enum: WEBHOOK_STATUSES })
  status!: WebhookStatus;
  /** Consecutive events given up on since the last successful delivery. */
  @ApiProperty({ type: Number })
  failure_count!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_delivered_at!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata!: Record<string, unknown>;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' })
  updated_at!: string;
}

export class DeliveryView {
  @ApiProperty({ type: String })
  id!: string;
  @ApiProperty({ type: String })
  subscription_id!: string;
  @ApiProperty({ type: String })
  event_id!: string;
  @ApiProperty({ type: Number })
  attempt!: number;
  @ApiProperty({ enum: DELIVERY_STATUSES })
  status!: DeliveryStatus;
  @ApiProperty({ type: Number, nullable: true })
  http_status!: number | null;
  @ApiProperty({ type: String, nullable: true })
  error!: string | null;
  @ApiProperty({ type: Number, nullable: true })
  duration_ms!: number | null;
  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;
}

export class PingResultView {
  @ApiProperty({ type: Number })
  http_status!: number;
  @ApiProperty({ type: Number })
  duration_ms!: number;
}

/** Payload of `webhook.disabled`, emitted when delivery failures switch a subscription off. */
export class WebhookDisabledData {
  @ApiProperty({ type: String })
  webhook_id!: string;
  @ApiProperty({ type: Number })
  failure_count!: number;
  @ApiProperty({ type: String })
  reason!: string;
}

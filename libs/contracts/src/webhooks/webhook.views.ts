import type { DeliveryStatus, WebhookStatus } from './webhook.dto';

/** A subscription as clients see it. The signing secret is never part of it. */
export interface WebhookView {
  id: string;
  name: string;
  url: string;
  /** null: every event type. */
  event_types: string[] | null;
  status: WebhookStatus;
  /** Consecutive events given up on since the last successful delivery. */
  failure_count: number;
  last_delivered_at: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  subscription_id: string;
  event_id: string;
  attempt: number;
  status: DeliveryStatus;
  http_status: number | null;
  error: string | null;
  duration_ms: number | null;
  created_at: string;
}

export interface PingResultView {
  http_status: number;
  duration_ms: number;
}

/** Payload of `webhook.disabled`, emitted when delivery failures switch a subscription off. */
export interface WebhookDisabledData {
  webhook_id: string;
  failure_count: number;
  reason: string;
}

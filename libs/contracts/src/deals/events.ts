/** Payloads of the events the deals service writes to its outbox (docs/deals.md describes when). */
export interface DealCreatedData {
  deal_id: string;
  name: string;
  pipeline_id: string;
  stage_id: string;
  contact_id: string | null;
  company_id: string | null;
  value: number;
  currency: string;
  status: string;
}

export interface DealUpdatedData {
  deal_id: string;
  /** Names of the fields whose values changed. */
  changed: string[];
}

export interface DealDeletedData {
  deal_id: string;
}

export interface DealWonData {
  deal_id: string;
  pipeline_id: string;
  stage_id: string;
  value: number;
  currency: string;
}

export interface DealLostData {
  deal_id: string;
  pipeline_id: string;
  stage_id: string;
  loss_reason: string | null;
}

export interface DealStaleData {
  deal_id: string;
  /** The inactivity clock: last_activity_at, or created_at when the deal never had activity. */
  last_activity_at: string;
  threshold_days: number;
}

export interface PipelineChangedData {
  pipeline_id: string;
  changed?: string[];
}

import { METADATA_MAX_BYTES, METADATA_MAX_KEY_LENGTH, METADATA_MAX_KEYS } from '../metadata';

/** Allowed values of the enumerated fields of contacts, companies, activities and tasks. */
export const CONTACT_STAGES = ['lead', 'prospect', 'customer', 'churned'] as const;
export type ContactStage = (typeof CONTACT_STAGES)[number];

export const CONTACT_SOURCES = ['organic', 'referral', 'paid', 'social', 'email', 'event', 'outbound', 'other'] as const;
export type ContactSource = (typeof CONTACT_SOURCES)[number];

export const ACTIVITY_TYPES = ['email', 'call', 'meeting', 'note'] as const;
export type ActivityType = (typeof ACTIVITY_TYPES)[number];

export const ACTIVITY_STATUSES = ['planned', 'completed', 'cancelled'] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

export const TASK_PRIORITIES = ['low', 'medium', 'high'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

export const TASK_STATUSES = ['pending', 'completed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Field length limits, documented in docs/contacts.md. */
export const ContactsLimits = {
  email: 254,
  name: 255,
  phone: 50,
  title: 255,
  sourceDetail: 500,
  icpScoreReason: 2000,
  search: 200,
  companyName: 255,
  domain: 253,
  industry: 100,
  subject: 500,
  body: 20000,
  taskTitle: 500,
  resolveIds: 500,
  metadataKeys: METADATA_MAX_KEYS,
  metadataKeyLength: METADATA_MAX_KEY_LENGTH,
  metadataBytes: METADATA_MAX_BYTES,
} as const;

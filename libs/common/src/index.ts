export * from './changes';
export * from './config';
export * from './cursors';
export * from './database';
export * from './ids';
export * from './list-query';
export * from './logger';
export * from './pagination';
export * from './postgres-errors';
export * from './startup';
export * from './idle-heap-trim';
export * from './validation';
export * from './tracing';
export * from './rows';

// The error shape and the metadata rule are wire contracts, kept in @crm/contracts so that a team reading
// our subjects gets them without our server code; re-exported so the services keep importing them here.
export {
  DomainError,
  ErrorCode,
  isErrorBody,
  IsMetadata,
  METADATA_MAX_BYTES,
  METADATA_MAX_KEY_LENGTH,
  METADATA_MAX_KEYS,
  metadataProblem,
} from '@crm/contracts';
export type { ErrorBody, FieldIssue } from '@crm/contracts';
export * from './event-filter';
export * from './event-filter-paths';
export * from './migration-safety';
export * from './retention';

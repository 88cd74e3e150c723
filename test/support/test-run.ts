import { randomBytes } from 'crypto';

/**
 * Every namespace a test makes (database `crm_<namespace>`, JetStream stream, Redis keys) starts with
 * `t<run id>`, the id Jest's global setup picks for the run, so the end-of-run check can find what this
 * run left behind without mistaking another run's resources for ours.
 */
export function testRunPrefix(): string {
  return `t${process.env.CRM_TEST_RUN ?? ''}`;
}

export function newTestRunId(): string {
  return randomBytes(3).toString('hex');
}

/** The run's template database (see template-database.ts), which global teardown drops. */
export function templateDatabaseName(): string {
  return `crm_${testRunPrefix()}_template`;
}

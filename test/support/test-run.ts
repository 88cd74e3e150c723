import { randomBytes } from 'crypto';
import { tmpdir } from 'os';
import { join } from 'path';

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

/**
 * Where the run keeps the first OpenAPI document a gateway served (see contractOf). Every gateway of a run
 * is built from the same sources and mounts the same routes whatever its settings, so all serve the same
 * document; reading it once spares each test file the gateway's document build (about a second of CPU on
 * a busy machine). Global teardown removes it.
 */
export function runOpenApiDocumentPath(): string | undefined {
  return process.env.CRM_TEST_RUN ? join(tmpdir(), `crm-${testRunPrefix()}-openapi.json`) : undefined;
}

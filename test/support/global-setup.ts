import { newTestRunId } from './test-run';

/** Picks this run's id; workers inherit it through the environment. */
export default function globalSetup(): void {
  process.env.CRM_TEST_RUN ??= newTestRunId();
}

/** This run's own seed: PROPERTY_SEED to replay one, else a new one per run of the suite. */
const RUN_SEED = Number(process.env.PROPERTY_SEED) || Math.floor(Math.random() * 2 ** 31);

/**
 * The runs of a property test: its fixed seed with every run, so what one machine found every machine
 * finds again, then this run's own seed with a third of the runs, so each run of the suite also tries
 * inputs no run before it did. fast-check's failure names the seed and path to replay; set PROPERTY_SEED
 * to it (and PROPERTY_RUNS for a longer search) to run that seed again.
 */
export function propertyRuns(fixed: number, runs: number): Array<{ seed: number; numRuns: number }> {
  const own = Number(process.env.PROPERTY_RUNS) || Math.max(1, Math.ceil(runs / 3));
  return [
    { seed: fixed, numRuns: runs },
    { seed: RUN_SEED, numRuns: own },
  ];
}

import { PeriodicTask } from './periodic-task';

/** A run the test finishes by hand. */
function gatedWork() {
  const runs: Array<() => void> = [];
  const work = () => new Promise<void>((resolve) => runs.push(resolve));
  return { runs, work };
}

describe('PeriodicTask', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs at start and then every interval, never two runs at once', async () => {
    const { runs, work } = gatedWork();
    const task = new PeriodicTask(1000, work, () => undefined);
    task.start();
    expect(runs).toHaveLength(1);
    jest.advanceTimersByTime(3000);
    expect(runs).toHaveLength(1);
    runs[0]();
    await Promise.resolve();
    await Promise.resolve();
    jest.advanceTimersByTime(1000);
    expect(runs).toHaveLength(2);
    runs[1]();
    await task.stop();
  });

  it('with firstRun after-interval, waits a whole interval before the first run', async () => {
    const { runs, work } = gatedWork();
    const task = new PeriodicTask(1000, work, () => undefined, { firstRun: 'after-interval' });
    task.start();
    expect(runs).toHaveLength(0);
    jest.advanceTimersByTime(999);
    expect(runs).toHaveLength(0);
    jest.advanceTimersByTime(1);
    expect(runs).toHaveLength(1);
    runs[0]();
    await task.stop();
  });

  it('stop waits for the run in progress and starts no other', async () => {
    const { runs, work } = gatedWork();
    const task = new PeriodicTask(1000, work, () => undefined);
    task.start();
    let stopped = false;
    const stopping = task.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    runs[0]();
    await stopping;
    jest.advanceTimersByTime(5000);
    expect(runs).toHaveLength(1);
  });

  it('reports a failed run and tries again at the next interval', async () => {
    const failures: string[] = [];
    let calls = 0;
    const task = new PeriodicTask(
      1000,
      async () => {
        calls++;
        throw new Error(`run ${calls}`);
      },
      (err) => failures.push(err.message),
    );
    task.start();
    await jest.advanceTimersByTimeAsync(1000);
    expect(failures).toEqual(['run 1', 'run 2']);
    await task.stop();
  });
});

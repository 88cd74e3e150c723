import { OriginGate } from './origin-gate';

/** A task that ends when told to. */
function held(): { task: () => Promise<void>; started: boolean; end: () => void } {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  const h = {
    started: false,
    end: () => end(),
    task: async () => {
      h.started = true;
      await done;
    },
  };
  return h;
}

const settle = () => new Promise((r) => setImmediate(r));

describe('OriginGate', () => {
  it('lets at most the cap run per origin, the rest in arrival order, and other origins alongside', async () => {
    const gate = new OriginGate(2);
    const a = [held(), held(), held(), held()];
    const runs = a.map((h, i) => gate.run(`http://receiver.example:8080/hooks/${i}`, h.task));
    const other = held();
    const otherRun = gate.run('https://receiver.example/hooks', other.task);
    await settle();
    expect(a.map((h) => h.started)).toEqual([true, true, false, false]);
    expect(other.started).toBe(true);
    expect(gate.inFlight('http://receiver.example:8080/x')).toBe(2);
    a[1].end();
    await settle();
    expect(a.map((h) => h.started)).toEqual([true, true, true, false]);
    a[0].end();
    a[2].end();
    await settle();
    expect(a[3].started).toBe(true);
    a[3].end();
    other.end();
    await Promise.all([...runs, otherRun]);
    expect(gate.inFlight('http://receiver.example:8080/x')).toBe(0);
  });

  it('frees the slot of a task that fails', async () => {
    const gate = new OriginGate(1);
    await expect(gate.run('http://a.example/', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(gate.run('http://a.example/', async () => 'next')).resolves.toBe('next');
  });
});

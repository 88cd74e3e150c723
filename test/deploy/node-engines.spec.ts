import { readFileSync } from 'fs';
import { join } from 'path';
import { minVersion, satisfies, validRange } from 'semver';

/**
 * The project runs on the oldest Node its own `engines` field admits. Every locked package, shipped or
 * used only to build and test, must say it supports that Node too; an override in package.json pins a
 * compatible version where a dependency's newest release dropped it.
 */
interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const lock = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

describe('Node engines of locked packages', () => {
  const declared = (lock.packages[''].engines as { node: string }).node;
  const oldest = minVersion(declared);

  it('the project declares the Node it supports', () => {
    expect(validRange(declared)).not.toBeNull();
    expect(oldest?.major).toBe(20);
  });

  it(`every locked package supports Node ${oldest?.version}`, () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        if (!wanted || !validRange(wanted)) return [];
        return satisfies(oldest!, wanted) ? [] : [`${path}@${entry.version}: node ${wanted}`];
      });
    expect(refusing).toEqual([]);
  });
});

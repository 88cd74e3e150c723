import { readFileSync } from 'fs';
import { join } from 'path';
import { minVersion, satisfies, validRange } from 'semver';

/**
 * The project runs on Node 20 (our machines) and Node 22 (the images), from the oldest release of each that
 * its own `engines` field admits. Every locked package, shipped or used only to build and test, must say it
 * supports those releases too; an override in package.json pins a compatible version where a dependency's
 * newest release dropped one.
 */
interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const ROOT = join(__dirname, '..', '..');
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const SUPPORTED_MAJORS = [20, 22];

describe('Node engines of locked packages', () => {
  const declared = (lock.packages[''].engines as { node: string }).node;
  // The oldest release of each supported major the range admits: each `||` alternative's minimum.
  const oldest = declared.split('||').map((alternative) => minVersion(alternative.trim())!);

  it('the project declares the Nodes it supports, as package.json does', () => {
    expect(validRange(declared)).not.toBeNull();
    expect((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node).toBe(declared);
    expect(oldest.map((v) => v.major)).toEqual(SUPPORTED_MAJORS);
    // Nothing older than those majors, nor the odd release between them.
    for (const refused of ['18.20.0', '20.18.0', '21.7.0']) expect({ refused, admitted: satisfies(refused, declared) }).toEqual({ refused, admitted: false });
  });

  it.each(oldest.map((v) => v.version))('every locked package supports Node %s', (version) => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, entry]) => {
        const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        if (!wanted || !validRange(wanted)) return [];
        return satisfies(version, wanted) ? [] : [`${path}@${entry.version}: node ${wanted}`];
      });
    expect(refusing).toEqual([]);
  });
});

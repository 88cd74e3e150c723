import { existsSync, readFileSync } from 'fs';
import { join } from 'path';

/** The command-line tools' shared parts: how they fail, and which API key they use. */
export function cliOf(name: string) {
  const fail = (message: string): never => {
    process.stderr.write(`${name}: ${message}\n`);
    process.exit(1);
  };
  /** `--key`, else CRM_API_KEY, else the development key `npm start` made; never printed. */
  const apiKey = (given: string | undefined): string => {
    if (given) return given;
    if (process.env.CRM_API_KEY) return process.env.CRM_API_KEY;
    const dev = join(__dirname, '..', '..', '.data', 'dev-api-key');
    if (existsSync(dev)) return readFileSync(dev, 'utf8').trim();
    return fail('no API key: pass --key or set CRM_API_KEY');
  };
  return { fail, apiKey };
}

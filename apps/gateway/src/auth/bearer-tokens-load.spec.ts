import type { Logger } from '@crm/common';
import { BearerTokens } from './bearer-tokens';

// The factory runs when jose is first required, which may be before this file's own lines run (a static import).
const loads = globalThis as { joseLoads?: number };
const joseLoads = (): number => loads.joseLoads ?? 0;
jest.mock('jose', () => {
  const counter = globalThis as { joseLoads?: number };
  counter.joseLoads = (counter.joseLoads ?? 0) + 1;
  return jest.requireActual('jose');
});

/** jose is not loaded with the gateway: only a token to verify loads it, once. */
describe('BearerTokens loading jose', () => {
  const logger = { warn: () => undefined } as unknown as Logger;
  const bearer = {
    issuer: 'https://issuer.test',
    audience: 'https://api.test',
    jwksUrl: 'https://issuer.test/jwks.json',
    jwksCooldownSeconds: 30,
    clockToleranceSeconds: 0,
    permissionsClaim: 'scope',
  };

  it('loads it on the first token, not with the module or the service', async () => {
    const tokens = new BearerTokens({ bearer }, logger);
    expect(joseLoads()).toBe(0);
    expect(await tokens.verify('not-a-jwt')).toMatchObject({ ok: false });
    expect(joseLoads()).toBe(0);

    // A JWT-shaped token that does not decode: refused as malformed by jose, before any key is fetched.
    const first = await tokens.verify('e30.e30.x');
    expect(first.ok).toBe(false);
    expect(!first.ok && first.error.details?.[0]).toMatchObject({ code: 'malformed_token' });
    expect(joseLoads()).toBe(1);
    await tokens.verify('e30.e30.x');
    expect(joseLoads()).toBe(1);
  });
});

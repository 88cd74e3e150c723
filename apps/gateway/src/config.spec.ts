import { ConfigError } from '@crm/common';
import { loadGatewayConfig } from './config';

describe('gateway config: TRUSTED_PROXIES', () => {
  const load = (env: Record<string, string>) => loadGatewayConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/crm', ...env });

  it('trusts no proxy by default', () => {
    expect(load({}).trustedProxies).toEqual([]);
  });

  it('takes addresses, CIDRs and loopback', () => {
    expect(load({ TRUSTED_PROXIES: ' 10.244.3.0/24, loopback,192.0.2.7, fd00::/8 , ::1' }).trustedProxies).toEqual([
      '10.244.3.0/24',
      'loopback',
      '192.0.2.7',
      'fd00::/8',
      '::1',
    ]);
  });

  it.each(['uniquelocal', 'linklocal', 'true', '1', '10.0.0.0/33', '300.1.1.1', 'proxy.local', '*'])('refuses %s', (value) => {
    expect(() => load({ TRUSTED_PROXIES: value })).toThrow(ConfigError);
  });
});

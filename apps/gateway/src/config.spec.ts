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

describe('gateway config: bearer tokens', () => {
  const load = (env: Record<string, string>) => loadGatewayConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/crm', ...env });
  const all = {
    AUTH_JWT_ISSUER: 'https://id.example.com/realms/crm',
    AUTH_JWT_AUDIENCE: 'https://crm.example.com',
    AUTH_JWT_JWKS_URL: 'https://id.example.com/certs',
  };

  it('is off without the variables, on with all three', () => {
    expect(load({}).bearer).toBeUndefined();
    expect(load(all).bearer).toMatchObject({
      issuer: all.AUTH_JWT_ISSUER,
      audience: all.AUTH_JWT_AUDIENCE,
      jwksUrl: all.AUTH_JWT_JWKS_URL,
      jwksCooldownSeconds: 30,
    });
  });

  it('refuses some without the others, naming what is missing', () => {
    expect(() => load({ AUTH_JWT_ISSUER: all.AUTH_JWT_ISSUER })).toThrow(/AUTH_JWT_ISSUER is set but AUTH_JWT_AUDIENCE and AUTH_JWT_JWKS_URL are not/);
    expect(() => load({ ...all, AUTH_JWT_JWKS_URL: '' })).toThrow(/AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE are set but AUTH_JWT_JWKS_URL is not/);
    expect(() => load({ ...all, AUTH_JWT_JWKS_URL: 'ftp://id.example.com/certs' })).toThrow(ConfigError);
  });

  it('takes the JWKS over https only, but for loopback hosts', () => {
    for (const url of ['http://id.example.com/certs', 'http://10.0.0.5/certs', 'http://128.0.0.1/certs', 'http://localhost.example.com/certs']) {
      expect(() => load({ ...all, AUTH_JWT_JWKS_URL: url })).toThrow(/AUTH_JWT_JWKS_URL must be an https:\/\/ URL/);
    }
    for (const url of [
      'https://id.example.com/certs',
      'http://127.0.0.1:8080/certs',
      'http://127.3.2.1/certs',
      'http://[::1]:8080/certs',
      'http://localhost:8080/certs',
    ]) {
      expect(load({ ...all, AUTH_JWT_JWKS_URL: url }).bearer!.jwksUrl).toBe(url);
    }
  });

  it('reads permissions from scope unless AUTH_JWT_PERMISSIONS_CLAIM names a claim or a dotted path to one', () => {
    expect(load(all).bearer!.permissionsClaim).toBe('scope');
    expect(load({ ...all, AUTH_JWT_PERMISSIONS_CLAIM: 'resource_access.crm-api.roles' }).bearer!.permissionsClaim).toBe('resource_access.crm-api.roles');
    for (const bad of ['a..b', '.roles', 'roles.', 'has space', 'a.b.c.d.e.f.g.h.i']) {
      expect(() => load({ ...all, AUTH_JWT_PERMISSIONS_CLAIM: bad })).toThrow(/AUTH_JWT_PERMISSIONS_CLAIM/);
    }
  });
});

import { createServer, Server } from 'http';
import { exportJWK, generateKeyPair, JWTPayload, KeyLike, SignJWT } from 'jose';

export const ISSUER_AUDIENCE = 'https://crm.test';

/**
 * The deployment's identity provider, played by a test: one ES256 key pair and its JWKS on 127.0.0.1.
 * test/api/bearer-tokens.spec.ts has a fuller one, for the JWKS fetching itself.
 */
export class TokenIssuer {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly privateKey: KeyLike,
  ) {}

  static async start(): Promise<TokenIssuer> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const server = createServer((req, res) => {
      if (req.url !== '/realms/crm/certs') return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new TokenIssuer(server, `http://127.0.0.1:${(server.address() as { port: number }).port}`, privateKey);
  }

  get issuer(): string {
    return `${this.url}/realms/crm`;
  }

  /** The gateway's settings for tokens from this issuer. */
  env(): Record<string, string> {
    return {
      AUTH_JWT_ISSUER: this.issuer,
      AUTH_JWT_AUDIENCE: ISSUER_AUDIENCE,
      AUTH_JWT_JWKS_URL: `${this.url}/realms/crm/certs`,
      AUTH_JWT_JWKS_COOLDOWN_SECONDS: '0',
    };
  }

  /** A token valid for 5 minutes unless the claims say otherwise. */
  sign(claims: JWTPayload): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: this.issuer, aud: ISSUER_AUDIENCE, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'JWT' })
      .sign(this.privateKey);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

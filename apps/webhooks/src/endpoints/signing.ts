import { randomBytes } from 'crypto';
import { Webhook } from 'standardwebhooks';

const SECRET_BYTES = 32;
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;

/** `whsec_` + base64 of 32 bytes from the OS's CSPRNG, the Standard Webhooks secret format. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** Length of the key a `whsec_` secret carries, in bytes. */
export function secretKeyBytes(secret: string): number {
  return Buffer.from(secret.slice('whsec_'.length), 'base64').length;
}

/**
 * Standard Webhooks headers: `webhook-id` stays the same across retries of one message so receivers
 * can de-duplicate; the timestamp is the attempt's, so receivers can refuse stale replays. With several
 * secrets (a rotation's overlap) `webhook-signature` lists one `v1,<signature>` per secret, separated by
 * spaces, current first; a receiver accepts the request when any of them verifies with its secret.
 */
export function signedHeaders(secrets: readonly string[], messageId: string, body: string, at = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'crm-webhooks/1.0',
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' '),
  };
}

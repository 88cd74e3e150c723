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

/** Signers kept per secret (a Webhook decodes its key once), bounded; the oldest go first. */
const SIGNERS = 10_000;
const signers = new Map<string, Webhook>();
/** Signatures made in the current second, by secret, message and body: the same event to subscriptions sharing a secret is signed once. */
let signedSecond = -1;
let signed = new Map<string, { body: string; signature: string }>();

function signerOf(secret: string): Webhook {
  let signer = signers.get(secret);
  if (!signer) {
    if (signers.size >= SIGNERS) signers.delete(signers.keys().next().value!);
    signers.set(secret, (signer = new Webhook(secret)));
  }
  return signer;
}

/** One `v1,<signature>` with the standardwebhooks signer, made once per secret, message id, body and second. */
function signature(secret: string, messageId: string, body: string, at: Date): string {
  const second = Math.floor(at.getTime() / 1000);
  if (second !== signedSecond) {
    signedSecond = second;
    signed = new Map();
  }
  const key = `${secret}\n${messageId}`;
  const cached = signed.get(key);
  if (cached?.body === body) return cached.signature;
  const made = signerOf(secret).sign(messageId, at, body);
  signed.set(key, { body, signature: made });
  return made;
}

/**
 * Standard Webhooks headers: `webhook-id` stays the same across retries of one message so receivers
 * can de-duplicate; the timestamp is the attempt's, so receivers can refuse stale replays. With several
 * secrets (a rotation's overlap) `webhook-signature` lists one `v1,<signature>` per secret, separated by
 * spaces, current first; a receiver accepts the request when any of them verifies with its secret.
 * The signature covers the whole seconds of `at` only, so one made in the same second for the same secret,
 * message and body is the same one, and is reused.
 */
export function signedHeaders(secrets: readonly string[], messageId: string, body: string, at = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'crm-webhooks/1.0',
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => signature(secret, messageId, body, at)).join(' '),
  };
}

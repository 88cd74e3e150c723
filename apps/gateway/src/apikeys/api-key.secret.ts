import { createHash, randomInt, timingSafeEqual } from 'crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_LENGTH = 32; // 32 base62 characters: about 190 bits of entropy

/** `crm_live_<32 base62>` or `crm_test_<...>`, drawn from the OS's CSPRNG without modulo bias. */
export function generateApiKey(environment: 'live' | 'test'): string {
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) secret += ALPHABET[randomInt(ALPHABET.length)];
  return `crm_${environment}_${secret}`;
}

/** A fast digest is right here: keys are long random strings, so there is nothing to brute-force. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export const API_KEY_SHAPE = /^crm_(live|test)_[A-Za-z0-9]{32,128}$/;

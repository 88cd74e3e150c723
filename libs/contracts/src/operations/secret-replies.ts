import { DomainError, ErrorCode } from '../errors';
import type { AnyOperation } from './operation';
import { Ops } from './operations';

/**
 * What a retry with an Idempotency-Key gets when the first request's answer carried a secret (a new API
 * key, a webhook's signing secret): that answer is never stored, so it cannot be replayed.
 */
export const SECRET_NOT_REPLAYED =
  'The request first sent with this Idempotency-Key succeeded, but its answer carried a secret that is shown only once and cannot be shown again. ' +
  'List the resources to find what it created; send a new Idempotency-Key to create another.';

export function secretNotReplayed(): DomainError {
  return new DomainError(ErrorCode.Conflict, SECRET_NOT_REPLAYED);
}

/** Whether the operation's answer carries a one-time secret (`reply: resource(View, {secret: true})`). */
export function repliesWithSecret(op: AnyOperation): boolean {
  return op.reply.kind === 'resource' && op.reply.secret === true;
}

let secretReplies: Set<string> | undefined;

/** Whether the operation named `name` (its NATS pattern, `webhooks.webhooks.create`) answers with a secret. */
export function namedOperationRepliesWithSecret(name: string): boolean {
  // Built on first use: Ops is assembled from every domain's file, which may still be loading at import time.
  secretReplies ??= new Set(
    Object.values(Ops)
      .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
      .filter(repliesWithSecret)
      .map((op) => op.name),
  );
  return secretReplies.has(name);
}

import { CustomDecorator, SetMetadata } from '@nestjs/common';

export const SECRET_REPLY_METADATA = 'crm:secret-reply';

/**
 * The route's success answer carries a secret shown only once (a new API key, a webhook's signing secret):
 * the Idempotency-Key store keeps a marker in its place, never the answer. @Route sets it from the
 * operation's `reply: resource(View, {secret: true})`; a hand-written route declares it itself.
 */
export const RepliesWithSecret = (): CustomDecorator<string> => SetMetadata(SECRET_REPLY_METADATA, true);

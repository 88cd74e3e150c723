import { ErrorBody } from '@crm/common';
import type { FastifyReply } from 'fastify';
import { httpStatusOf } from '@crm/contracts';

/** Sends `{error: {code, message, details?}}` with the status its code maps to; a hook returns the reply it answers with. */
export function writeError(reply: FastifyReply, error: ErrorBody, headers: Record<string, string> = {}): FastifyReply {
  if (reply.sent) return reply;
  const status = httpStatusOf(error.code);
  if (status === 503 && !reply.hasHeader('Retry-After')) reply.header('Retry-After', '1');
  return reply.code(status).headers(headers).send({ error });
}

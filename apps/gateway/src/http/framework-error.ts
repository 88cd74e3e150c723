import { ErrorBody, ErrorCode, Logger } from '@crm/common';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { writeError } from './write-error';

/** The longest path parameter the router takes: far past any id, slug or key the API makes. */
export const MAX_PARAM_LENGTH = 1024;

/**
 * The errors Fastify's router raises before any hook or route runs, each as the API answers it. The
 * rest of Fastify's request-time errors (FST_ERR_CTP_*, reading a body) reach the exception filter
 * with their status; the others are programming errors at start-up.
 */
const ANSWERS: Record<string, ErrorBody> = {
  // decodeURI failed on the path: a `%` not followed by two hex digits, or bytes that are not UTF-8.
  FST_ERR_BAD_URL: { code: ErrorCode.InvalidRequest, message: 'The path is not valid percent-encoded UTF-8: send a literal % as %25.' },
  // No id is that long, so the resource does not exist: the 404 of an unknown id, not Fastify's 414.
  FST_ERR_MAX_PARAM_LENGTH: { code: ErrorCode.NotFound, message: `No resource has an id, slug or key longer than ${MAX_PARAM_LENGTH} characters.` },
};

/**
 * Fastify's `frameworkErrors`: a malformed path is answered in the API's error shape, with the request's
 * id, before the key check, as malformed HTTP is (answerClientError). Anything else it may raise
 * (FST_ERR_ASYNC_CONSTRAINT; the gateway has no asynchronous route constraints) is our fault.
 */
export function frameworkErrorHandler(logger: Logger) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void => {
    reply.header('X-Request-Id', req.id);
    const answer = ANSWERS[err.code];
    if (!answer) logger.error({ err, request_id: req.id }, 'router failed unexpectedly');
    writeError(reply, answer ?? { code: ErrorCode.Internal, message: 'An internal error occurred.' });
  };
}

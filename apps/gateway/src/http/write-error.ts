import { ErrorBody } from '@crm/common';
import type { Response } from 'express';
import { httpStatusOf } from '@crm/contracts';

/** Writes `{error: {code, message, details?}}` with the status its code maps to. */
export function writeError(res: Response, error: ErrorBody, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (httpStatusOf(error.code) === 503 && !res.getHeader('Retry-After')) res.setHeader('Retry-After', '1');
  res.status(httpStatusOf(error.code)).json({ error });
}

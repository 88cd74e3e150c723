import pino, { Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Where secrets could sit in a log entry: credentials in request headers (bearer tokens among them), a
 * key, bearer token or signing secret in a logged object or request body, and the bound parameters of a failed SQL statement (an INSERT of an
 * API key digest or a webhook secret). This list is the one place redaction is configured.
 */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'key',
  'token',
  'secret',
  'password',
  '*.key',
  '*.token',
  '*.secret',
  '*.password',
  '*.signing_secret',
  'body',
  '*.body',
  'err.parameters',
  'err.driverError.parameters',
  'err.query',
  'err.driverError.query',
];

/** Structured JSON logs, one object per line, with the service name on every entry and secrets redacted. */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

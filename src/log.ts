import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs. Anything that can carry a credential is censored wherever it appears in a log line,
 * so a handler that logs a request, a config object or an upstream call cannot leak one.
 */
const REDACT_PATHS = [
  'authorization',
  '*.authorization',
  '*.*.authorization',
  'headers.authorization',
  'req.headers.authorization',
  'req.headers.cookie',
  'apiKey',
  '*.apiKey',
  'key',
  '*.key',
  'secret',
  '*.secret',
  'adminToken',
  '*.adminToken',
  'password',
  'api_key',
  '*.api_key',
  '*.*.api_key',
  '*.password',
  'databaseUrl',
  '*.databaseUrl',
  // A channel's authentication (ChannelConfig.auth: a Bearer key, a set of headers, Volcengine's
  // secret), wherever a channel, its config or a list of them is logged; and the raw CHANNELS
  // fields that carry the same credentials.
  'auth',
  '*.auth',
  '*.*.auth',
  '*.*.*.auth',
  'volcengine',
  '*.volcengine',
  '*.*.volcengine',
  '*.*.*.volcengine',
  'secretAccessKey',
  '*.secretAccessKey',
  '*.*.secretAccessKey',
  '*.*.*.api_key',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gateway' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths pino removes before a line is written. Secrets (keys, tokens, cookies, passwords) never reach a log,
 * whatever a caller passes in a field (docs/house-rules.md rule 10).
 */
const REDACT_PATHS = [
  'authorization',
  'cookie',
  'password',
  'secret',
  'token',
  'controlToken',
  'apiKey',
  'key',
  '*.authorization',
  '*.cookie',
  '*.password',
  '*.secret',
  '*.token',
  '*.controlToken',
  '*.apiKey',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function createLogger(options: { level: string; name?: string }, destination?: DestinationStream): Logger {
  return pino(
    {
      name: options.name ?? 'parley',
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * A child logger for lines whose fields are fixed by the code and can hold no secret (the access log: method, route
 * pattern, status, duration, request id). It skips redaction, which costs ~15 µs of CPU per line with the paths
 * above (three quarters of a line's cost; native-bench/RESULTS.md). Never give it request data or error objects.
 */
export function fixedFieldLogger(log: Logger, bindings: Record<string, unknown>): Logger {
  return log.child(bindings, { redact: { paths: [], censor: '[redacted]' } });
}

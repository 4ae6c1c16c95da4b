import { pino, type Logger, type DestinationStream } from 'pino';
import { prettyDestination } from './pretty.js';

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

export { prettyLine } from './pretty.js';

/**
 * `json` (the default: one JSON object a line, for collectors) or `pretty` (a human line, for a terminal; the same
 * redacted fields). `pretty` writes synchronously to stdout: it is for a person watching, not for throughput.
 */
export type LogFormat = 'json' | 'pretty';

export function createLogger(
  options: { level: string; name?: string; format?: LogFormat },
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      name: options.name ?? 'parley',
      level: options.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? (options.format === 'pretty' ? prettyDestination() : pino.destination({ dest: 1, sync: false })),
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

/** Health probes and static files (the dashboard's, the widget's): routes whose successes nobody reads at info. */
const ROUTINE_ROUTE = /^\/(?:healthz|readyz|metrics|dashboard(?:\/.*)?|widget\/.*)$/;

/**
 * The level of a request's access line: `debug` for a successful probe or static file (a proxy's health checks would
 * otherwise be most of the log), `info` for everything else, failures of those included.
 */
export function accessLevel(route: string, status: number): 'debug' | 'info' {
  return status < 400 && ROUTINE_ROUTE.test(route) ? 'debug' : 'info';
}

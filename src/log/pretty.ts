import type { DestinationStream } from 'pino';

/** pino's numeric levels and how a terminal shows them (colour when the stream is a TTY). */
const LEVELS: Record<number, { name: string; colour: string }> = {
  10: { name: 'TRACE', colour: '\x1b[90m' },
  20: { name: 'DEBUG', colour: '\x1b[90m' },
  30: { name: 'INFO ', colour: '\x1b[32m' },
  40: { name: 'WARN ', colour: '\x1b[33m' },
  50: { name: 'ERROR', colour: '\x1b[31m' },
  60: { name: 'FATAL', colour: '\x1b[35m' },
};
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';
/** Fields every line has, or that the line's head already shows. */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name']);

function show(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value);
}

/**
 * One log line (pino's JSON) as a terminal reader wants it: `12:04:05 INFO  parley listening port=3000 ...`. The
 * line is still the redacted one pino wrote; only its layout changes. A line that is not JSON passes through.
 */
export function prettyLine(json: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = LEVELS[entry['level'] as number] ?? { name: String(entry['level']), colour: '' };
  const time = typeof entry['time'] === 'string' ? entry['time'].slice(11, 19) : '';
  const fields = Object.entries(entry)
    .filter(([key, value]) => !HIDDEN.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${show(value)}`)
    .join(' ');
  const head = colour ? `${DIM}${time}${RESET} ${level.colour}${level.name}${RESET}` : `${time} ${level.name}`;
  const tail = fields === '' ? '' : colour ? ` ${DIM}${fields}${RESET}` : ` ${fields}`;
  return `${head} ${String(entry['msg'] ?? '')}${tail}\n`;
}

/** A pino destination that writes pretty lines to `out` (stdout by default). */
export function prettyDestination(
  out: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): DestinationStream {
  const colour = out.isTTY === true;
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(prettyLine(line, colour));
    },
  };
}

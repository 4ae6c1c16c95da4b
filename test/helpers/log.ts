import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log/index.js';

/** A real pino logger whose lines are kept in memory, so tests can assert what was (and was not) logged. */
export function captureLogger(level = 'debug'): {
  log: Logger;
  lines: Array<Record<string, unknown>>;
  text: () => string;
} {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      raw.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      done();
    },
  });
  const log = createLogger({ level, name: 'test' }, stream);
  return {
    log,
    get lines() {
      return raw.map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    text: () => raw.join('\n'),
  };
}

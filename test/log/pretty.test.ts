import t from 'tap';
import { Writable } from 'node:stream';
import { createLogger, prettyLine } from '../../src/log/index.js';
import { prettyDestination } from '../../src/log/pretty.js';

t.test('pretty lines: time, level, message, then the fields; still redacted', async (t) => {
  const line = prettyLine(
    JSON.stringify({
      level: 30,
      time: '2026-01-02T12:04:05.678Z',
      pid: 1,
      name: 'parley',
      msg: 'parley listening',
      port: 3000,
      host: '127.0.0.1',
    }),
    false,
  );
  t.equal(line, '12:04:05 INFO  parley listening port=3000 host=127.0.0.1\n');
  t.equal(prettyLine('not json', false), 'not json\n', 'a line that is not JSON passes through');

  let written = '';
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      written += chunk.toString();
      done();
    },
  });
  const log = createLogger({ level: 'info' }, prettyDestination(out));
  log.warn({ apiKey: 'sk_live_secret_value', route: '/x y' }, 'refused');
  t.match(written, /^\d\d:\d\d:\d\d WARN  refused /, 'a human line');
  t.match(written, /apiKey=\[redacted\]/, 'secrets are redacted before the layout');
  t.notMatch(written, /sk_live_secret_value/);
  t.match(written, /route="\/x y"/, 'values with spaces are quoted');
  t.notMatch(written, /\x1b\[/, 'no colour when the stream is not a terminal');
});

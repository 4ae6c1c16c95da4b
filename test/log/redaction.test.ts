import t from 'tap';
import { fixedFieldLogger } from '../../src/log/index.js';
import { captureLogger } from '../helpers/log.js';

t.test(
  'secrets are redacted from every line, except on a fixed-field logger, which leaves its parent redacting',
  async (t) => {
    const captured = captureLogger('info');
    const { log, text } = captured;
    log.info(
      { token: 'tok-secret', apiKey: 'sk-secret', nested: { authorization: 'Bearer sk-secret', cookie: 'c=secret' } },
      'credentials given',
    );
    const access = fixedFieldLogger(log, { component: 'access' });
    access.info({ method: 'GET', route: '/healthz', status: 200, durationMs: 0.1, requestId: 'r-1' }, 'request');
    log.child({ component: 'voice' }).info({ controlToken: 'ct-secret' }, 'child of the parent');
    t.notMatch(text(), /secret/, 'nothing secret reached a line');
    t.match(captured.lines[0], {
      token: '[redacted]',
      apiKey: '[redacted]',
      nested: { authorization: '[redacted]', cookie: '[redacted]' },
    });
    t.match(
      captured.lines[1],
      { component: 'access', method: 'GET', route: '/healthz', status: 200, requestId: 'r-1', msg: 'request' },
      'the access line whole',
    );
    t.match(
      captured.lines[2],
      { component: 'voice', controlToken: '[redacted]' },
      'the parent and its other children still redact',
    );
  },
);

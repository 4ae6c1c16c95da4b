import t from 'tap';
import { startTestApp } from '../helpers/app.js';

/**
 * The voice default (VOICE_PROVIDER=auto outside tests): the local voice when its engines are installed; otherwise
 * the simulator, said once at start-up and in /readyz's notes (the playground shows the same note).
 */
t.test('auto without the local engines: the simulator, with one start-up line and a readiness note', async (t) => {
  const app = await startTestApp(t, {
    env: { NODE_ENV: 'development', VOICE_PROVIDER: 'auto', VOICE_LOCAL_ENGINES_PATH: '/nonexistent' },
  });
  t.equal(app.deps.voiceProvider?.kind, 'simulator');
  const lines = app.logs.lines.filter((l) => String(l.msg).startsWith('voice is simulated'));
  t.equal(lines.length, 1, 'one clear line at start-up');
  t.match(lines[0], { level: 40, missing: ['pocketsphinx', 'espeak-ng'] });
  t.match(String(lines[0]!.msg), /does not understand speech; install pocketsphinx.*or set VOICE_PROVIDER/);
  const ready = await fetch(`${app.url}/readyz`);
  t.equal(ready.status, 200);
  t.match(await ready.json(), {
    status: 'ready',
    checks: { database: 'ok', store: 'ok' },
    notes: { voice: /^voice is simulated: it does not understand speech/ },
  });
});

t.test('auto with the engines installed: the local voice, no note', async (t) => {
  const app = await startTestApp(t, { env: { NODE_ENV: 'development', VOICE_PROVIDER: 'auto' } });
  t.equal(app.deps.voiceProvider?.kind, 'local');
  t.same(await (await fetch(`${app.url}/readyz`)).json(), {
    status: 'ready',
    checks: { database: 'ok', store: 'ok' },
  });
});

t.test('auto under NODE_ENV=test: the simulator, no note', async (t) => {
  const app = await startTestApp(t, { env: { VOICE_PROVIDER: 'auto' } });
  t.equal(app.deps.voiceProvider?.kind, 'simulator');
  t.notOk(app.deps.voiceNote);
});

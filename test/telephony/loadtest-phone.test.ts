import t from 'tap';
import { fileURLToPath } from 'node:url';
import type { LoadTestReport } from '../../sdk/src/cli/loadtest/run.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { runScript } from '../sdk/helpers.js';
import { voiceAssistant } from '../voice/helpers.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from './carrier.js';

/**
 * `parley-loadtest --phone` as a user runs it (a child process) against a loopback Parley on the provider simulator:
 * the calls are phone calls placed through the phone simulator, reported with the figures of a WebSocket run.
 */

const CLI = fileURLToPath(new URL('../../sdk/src/cli/loadtest/main.ts', import.meta.url));
// Held 6 s: on a loaded machine a call whose CLI, carrier webhook and media stream start in a child process could
// take most of 3 s to connect, and ended before the assistant's first audio came back.
const quick = ['--calls', '2', '--ramp-up', '200ms', '--duration', '6s', '--json', '--no-report', '--yes'];

t.test('with an API key: a temporary assistant and number, two phone calls, the usual figures', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const run = await runScript(CLI, ['--url', app.url, '--phone', ...quick], {
    env: { PARLEY_API_KEY: owner.secret },
  });
  t.equal(run.code, 0, `exit 0 (stderr: ${run.stderr.slice(-800)})`);
  t.match(run.stderr, /phone\s+placed as a carrier places them/, 'the plan says the calls are phone calls');
  t.match(run.stderr, /G\.711 μ-law 8 kHz/);
  t.match(run.stderr, /added temporary phone number \+1555\d{7}[\s\S]*deleted the temporary phone number/);
  const report = JSON.parse(run.stdout) as LoadTestReport;
  t.match(report.voice, { attempted: 2, connected: 2, ended: 2, refusals: {}, errors: {} });
  t.same(report.voice.endReasons, { client: 2 }, 'this tool hung up both calls');
  t.ok(report.voice.mintMs !== null && report.voice.connectMs !== null, 'answer (mint) and connect times');
  t.ok(report.voice.firstAudioMs !== null, 'first assistant audio');
  t.ok(report.voice.echoDetected && report.voice.roundTripMs !== null, 'the round trip through the echo assistant');
  const sent = report.voice.audio.sentBytes;
  t.ok(sent >= 2 * 8000 && sent % 160 === 0, `the callers talked ${sent / 8000} s of μ-law in 20 ms frames`);
  t.ok(report.voice.server !== null, "the service's own figures of the calls, read with the key");
  const left = await app.database.sql`select 1 from phone_numbers where account_id = ${owner.accountId}`;
  t.equal(left.length, 0, 'the temporary number is gone');
});

t.test('with a registered number and its carrier credentials (no key): the calls reach its assistant', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const number = await addNumber(app, owner, await voiceAssistant(app, owner));
  const run = await runScript(
    CLI,
    ['--url', app.url, '--phone', '--number', number.phoneNumber, '--account-sid', ACCOUNT_SID, ...quick],
    { env: { PARLEY_API_KEY: '', PARLEY_PHONE_AUTH_TOKEN: AUTH_TOKEN } },
  );
  t.equal(run.code, 0, `exit 0 (stderr: ${run.stderr.slice(-800)})`);
  const report = JSON.parse(run.stdout) as LoadTestReport;
  t.match(report.voice, { attempted: 2, connected: 2 });
  t.ok(report.voice.firstAudioMs !== null, 'the assistant answered on the phone');

  const usage = await runScript(CLI, ['--url', app.url, '--phone', '--number', number.phoneNumber], {
    env: { PARLEY_API_KEY: '' },
  });
  t.equal(usage.code, 1);
  t.match(usage.stderr, /--number needs --account-sid/, 'missing carrier credentials are named');
});

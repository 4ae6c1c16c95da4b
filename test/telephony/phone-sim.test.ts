import t from 'tap';
import { fileURLToPath } from 'node:url';
import type { PhoneSimReport } from '../../sdk/src/cli/phone/run.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { runScript } from '../sdk/helpers.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from './carrier.js';

/**
 * `npm run phone-sim` as an owner without a carrier account runs it (a child process): two simulated phone calls to
 * a registered number of a real Parley on the provider simulator, then the report. The assistant echoes (the
 * simulator's [sim:echo]) so the round trip is measured.
 */

const CLI = fileURLToPath(new URL('../../sdk/src/cli/phone/main.ts', import.meta.url));

t.test('two simulated calls: answered, heard, round trip, hung up, and in the conversations', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const assistant = await voiceAssistant(app, owner, { instructions: 'Say it back. [sim:echo]' });
  const number = await addNumber(app, owner, assistant);
  const args = ['--url', app.url, '--number', number.phoneNumber, '--account-sid', ACCOUNT_SID];
  const run = await runScript(CLI, [...args, '--calls', '2', '--duration', '3s', '--json'], {
    env: { PHONE_SIM_AUTH_TOKEN: AUTH_TOKEN },
  });
  t.equal(run.code, 0, `exit 0 (stderr: ${run.stderr.slice(-800)})`);
  const report = JSON.parse(run.stdout) as PhoneSimReport;
  t.match(report.summary, { attempted: 2, streamed: 2, rejected: 0, refused: 0, failed: 0 });
  t.same(report.summary.endReasons, { hangup: 2 }, 'both callers hung up at the end of their 3 s');
  for (const call of report.calls) {
    t.ok(call.sessionId?.startsWith('vs_'), `call ${call.index} reached a voice session`);
    t.ok(call.answerMs !== null && call.answerMs > 0, `call ${call.index}: the webhook answered`);
    t.ok(call.firstAudioMs !== null, `call ${call.index}: assistant audio was heard`);
    t.ok(call.roundTripMs !== null && call.roundTripMs.count > 10, `call ${call.index}: echoed frames came back`);
    t.ok(call.sentMs >= 2500, `call ${call.index}: the caller talked ${call.sentMs} ms`);
  }
  t.ok(report.summary.answerMs !== null && report.summary.firstAudioMs !== null && report.summary.roundTripMs !== null);

  // The calls are phone conversations, settled with the caller's hang-up.
  const ids = report.calls.map((c) => c.sessionId!);
  const rows = await waitFor(async () => {
    const r = await app.database.sql<{ state: string; endReason: string | null; source: string }[]>`
      select s.state, s.end_reason, c.source from voice_sessions s join conversations c on c.id = s.conversation_id
      where s.id in ${app.database.sql(ids)}`;
    return r.length === 2 && r.every((x) => x.state === 'ended') ? r : undefined;
  }, 'both calls to be settled');
  // A hang-up (the carrier's stop) is the caller ending the call: no end reason, as for any client's end.
  t.same(
    rows!.map((r) => [r.source, r.endReason]),
    [
      ['phone', null],
      ['phone', null],
    ],
  );

  // The text summary, and a call to a number nobody registered (rejected: exit 1).
  const text = await runScript(CLI, [...args.slice(0, 2), '--number', '+15550199998', ...args.slice(4)], {
    env: { PHONE_SIM_AUTH_TOKEN: AUTH_TOKEN },
  });
  t.equal(text.code, 1, 'a call that is not answered with a stream exits 1');
  t.match(text.stdout, /0\/1 answered with a stream, 1 rejected/);
  t.match(text.stdout, /end reasons\s+rejected: 1/);

  const usage = await runScript(CLI, ['--url', app.url, '--number', '555'], {});
  t.equal(usage.code, 1);
  t.match(usage.stderr, /--number must be E\.164/, 'a bad flag says which and why');
});

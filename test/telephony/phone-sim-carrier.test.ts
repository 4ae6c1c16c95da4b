import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { runScript } from '../sdk/helpers.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { api } from '../webhooks/helpers.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from './carrier.js';

/**
 * `npm run phone-sim -- carrier` as a developer runs it (a child process): Parley's TWILIO_API_BASE_URL points at it,
 * a call placed by API to a number it answers as a machine gets the voicemail message, and on Ctrl-C the carrier
 * prints the calls it carried.
 */

const CLI = fileURLToPath(new URL('../../sdk/src/cli/phone/main.ts', import.meta.url));

t.test('phone-sim carrier carries a call Parley places, and reports it', async (t) => {
  let url: string | undefined;
  let child: { kill: (signal: NodeJS.Signals) => boolean } | undefined;
  const machine = '+15557100001';
  const running = runScript(CLI, ['carrier', '--account-sid', ACCOUNT_SID, '--callee', `${machine}=machine`], {
    env: { PHONE_SIM_AUTH_TOKEN: AUTH_TOKEN },
    timeoutMs: 60_000,
    watch: (c, stderr) => {
      child = c;
      url ??= /simulated carrier at (http:\/\/[^:]+:\d+)/.exec(stderr)?.[1];
    },
  });
  await waitFor(() => url, 'the carrier to listen', 20_000);
  const app = await startTestApp(t, { env: { TWILIO_API_BASE_URL: url!, API_RATE_LIMIT_PER_MINUTE: '100000' } });
  const owner = await createOwner(app.database.sql);
  const assistant = await voiceAssistant(app, owner);
  const from = (await addNumber(app, owner, assistant)).phoneNumber;
  const placed = await api(app.url, 'POST', '/api/v1/calls', owner.secret, {
    assistantId: assistant.publicId,
    from,
    to: machine,
    voicemail: { message: 'Please call us back.' },
  });
  t.equal(placed.status, 201, placed.text);
  const call = await waitFor(
    async () => {
      const c = await api(app.url, 'GET', `/api/v1/calls/${placed.body.id}`, owner.secret);
      return c.body.status === 'completed' ? c.body : undefined;
    },
    'the call to end',
    30_000,
  );
  t.match(call, { answeredBy: 'machine', outcome: 'voicemail' });
  child!.kill('SIGINT');
  const run = await running;
  t.equal(run.code, 0, run.stderr.slice(-500));
  const report = JSON.parse(run.stdout) as { calls: { to: string; voicemail?: string; statuses: string[] }[] };
  t.match(report.calls, [{ to: machine, voicemail: 'Please call us back.' }], 'the machine recorded the message');
  t.match(run.stderr, /machine: initiated > ringing > in-progress > completed/, 'and a line said how the call went');
});

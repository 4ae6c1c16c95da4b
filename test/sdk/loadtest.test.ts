import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { syntheticSpeech, wavHeader } from '../../sdk/src/index.js';
import type { LoadTestReport } from '../../sdk/src/cli/loadtest/run.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { ORIGIN, voiceAssistant } from '../voice/helpers.js';
import { runScript } from './helpers.js';

/** parley-loadtest as a user runs it (a child process) against a loopback Parley with the echo simulator. */

const CLI = fileURLToPath(new URL('../../sdk/src/cli/loadtest/main.ts', import.meta.url));

function runCli(args: string[], options: { interrupt?: boolean; env?: Record<string, string> } = {}) {
  let interrupted = false;
  return runScript(CLI, args, {
    env: { PARLEY_API_KEY: '', ...options.env },
    // Interrupt once the calls are up (a progress line says so), as a person pressing Ctrl-C would.
    watch: (child, stderr) => {
      if (options.interrupt && !interrupted && /connected [1-9]/.test(stderr)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    },
  });
}

t.test(
  'voice calls and a chat loop with an API key, no --assistant: a temporary echo assistant, latencies, round trip, refusals by reason, report',
  async (t) => {
    // Two calls at most on this instance: the third caller is refused 429 voice_concurrency_limit and keeps retrying.
    const metricsToken = 'metrics-token-for-the-loadtest-0123';
    const app = await startTestApp(t, {
      env: {
        VOICE_MAX_CONCURRENT_SESSIONS: '2',
        METRICS_TOKEN: metricsToken,
        // The refused third caller retries its mint through the run: the key's own limit is not what this tests.
        API_RATE_LIMIT_PER_MINUTE: '1000',
      },
    });
    const owner = await createOwner(app.database.sql);
    const dir = mkdtempSync(join(tmpdir(), 'parley-loadtest-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const speech = syntheticSpeech({ utterances: 1, speechMs: 600, pauseMs: 400 });
    writeFileSync(join(dir, 'in.wav'), Buffer.concat([wavHeader(speech.length), speech]));
    const reportPath = join(dir, 'report.html');

    const run = await runCli(
      [
        '--url',
        app.url,
        '--calls',
        '3',
        '--chats',
        '1',
        '--ramp-up',
        '500ms',
        '--duration',
        '5s',
        '--input',
        join(dir, 'in.wav'),
        '--json',
        '--report',
        reportPath,
      ],
      { env: { PARLEY_API_KEY: owner.secret, PARLEY_METRICS_TOKEN: metricsToken } },
    );
    t.equal(run.code, 0, `exit 0 (stderr: ${run.stderr.slice(-800)})`);
    t.match(
      run.stderr,
      /parley-loadtest plan[\s\S]*3 concurrent calls[\s\S]*voice minutes/,
      'the plan was printed before starting',
    );
    t.match(run.stderr, /API key sk_live_/, 'the key is named but masked');
    t.notMatch(run.stderr, new RegExp(owner.secret), 'the whole key is never printed');
    t.match(run.stderr, /created temporary assistant asst_\w+[\s\S]*deleted the temporary assistant/);
    const report = JSON.parse(run.stdout) as LoadTestReport;
    t.equal(report.interrupted, false);
    t.match(report.target, { temporaryAssistant: true, assistantId: /^asst_/, auth: 'api-key' });
    const [left] = await app.database.sql<
      Array<{ n: number }>
    >`select count(*)::int as n from assistants where account_id = ${owner.accountId}`;
    t.equal(left!.n, 0, 'the temporary assistant is gone');
    t.ok(
      report.chat !== null && report.chat.answered > 0,
      `the chat loop was answered: ${JSON.stringify(report.chat)}`,
    );
    t.match(report.chat!.latencyMs, { p50: Number, p99: Number });
    t.equal(report.voice.connected, 2, 'two calls connected');
    t.equal(report.voice.peakConcurrent, 2);
    t.ok(
      (report.voice.refusals['429 voice_concurrency_limit'] ?? 0) >= 1,
      `the third was refused by reason: ${JSON.stringify(report.voice.refusals)}`,
    );
    t.same(report.voice.errors, {}, 'no errors');
    t.same(report.voice.endReasons, { client: 2 }, 'both calls were ended by the tool');
    t.match(report.voice.mintMs, { count: 2, p50: Number, p95: Number, p99: Number });
    t.ok(report.voice.echoDetected, 'the echo came back');
    t.ok(
      report.voice.roundTripMs !== null && report.voice.roundTripMs.count > 0,
      `round trips measured: ${JSON.stringify(report.voice.roundTripMs)}`,
    );
    t.ok(
      report.voice.roundTripMs!.count <= report.voice.audio.sentBytes / 960,
      'each round trip is a frame that was sent',
    );
    t.ok(report.voice.roundTripMs!.p50 <= report.voice.roundTripMs!.p99);
    t.ok(report.voice.firstAudioMs !== null, 'first assistant audio timed');
    t.ok(
      report.voice.audio.sentBytes > 0 && report.voice.audio.sentBytes % 960 === 0,
      'audio was streamed in 20 ms frames',
    );
    t.ok(report.voice.audio.receivedBytes > 0, 'and came back');
    t.equal(report.voice.audio.receivedWhileGateClosedBytes, 0);
    // The service's own figures for the same calls, read from their timelines (the echo answers no turns).
    t.match(report.voice.server, { calls: 2, turns: 0, turnLatencyMs: null, unavailable: null });
    t.ok(report.timeline.length >= 3, 'a timeline point per second');
    // The server's side (its /metrics before and after): how long Parley itself held the frames, both directions.
    t.equal(report.server?.error, undefined, `server figures read: ${JSON.stringify(report.server)}`);
    t.match(report.server, { metricsUrl: `${app.url}/metrics` });
    t.ok((report.server?.callerToProviderMs?.count ?? 0) > 0, 'caller frames timed by the server');
    t.ok((report.server?.providerToCallerMs?.count ?? 0) > 0, 'assistant audio timed by the server');
    t.ok((report.server?.appendWaitMs?.count ?? 0) > 0, 'the append window wait, apart (default window)');
    t.ok(report.server!.callerToProviderMs!.p50Ms <= report.server!.callerToProviderMs!.p99Ms);
    const html = readFileSync(reportPath, 'utf8');
    t.match(html, /<svg[^>]*aria-label="latency percentiles"/, 'the HTML report has the latency chart');
    t.match(html, /429 voice_concurrency_limit/);
  },
);

t.test('keyless with an Origin, and Ctrl-C: the calls are ended and the report still printed', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const assistant = await voiceAssistant(app, owner);
  const run = await runCli(
    [
      '--url',
      app.url,
      '--assistant',
      assistant.publicId,
      '--origin',
      ORIGIN,
      '--calls',
      '2',
      '--ramp-up',
      '0s',
      '--duration',
      '60s',
      '--no-report',
    ],
    { interrupt: true },
  );
  t.equal(run.code, 130, `exit 130 after Ctrl-C (stderr: ${run.stderr.slice(-500)})`);
  t.match(run.stderr, /keyless, Origin https:\/\/shop\.example/);
  t.match(run.stderr, /stopping: ending the calls/);
  t.match(run.stdout, /parley-loadtest INTERRUPTED after/, 'the summary is printed');
  t.match(run.stdout, /voice: 2\/2 calls connected/);
  t.match(run.stdout, /end reasons\s+client: 2/);
  t.equal(app.app.voice.sessions.size, 0, 'no session is left running on the server');
});

t.test('bad command lines are refused with a message, before anything is sent', async (t) => {
  const noTarget = await runCli(['--assistant', 'asst_x', '--api-key', 'sk_live_x']);
  t.equal(noTarget.code, 1);
  t.match(noTarget.stderr, /--url is required/);
  const tooMany = await runCli([
    '--url',
    'http://127.0.0.1:9',
    '--assistant',
    'asst_x',
    '--api-key',
    'sk_live_x',
    '--calls',
    '100000',
  ]);
  t.match(tooMany.stderr, /--calls: at most 2000/);
  const tooLong = await runCli([
    '--url',
    'http://127.0.0.1:9',
    '--assistant',
    'asst_x',
    '--api-key',
    'sk_live_x',
    '--duration',
    '2h',
  ]);
  t.match(tooLong.stderr, /not a duration|between 1s and 10m/);
  const urlWithoutToken = await runCli([
    '--url',
    'http://127.0.0.1:9',
    '--assistant',
    'asst_x',
    '--api-key',
    'sk_live_x',
    '--metrics-url',
    'http://127.0.0.1:9/metrics',
  ]);
  t.equal(urlWithoutToken.code, 1);
  t.match(urlWithoutToken.stderr, /--metrics-url needs --metrics-token/);
});

import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { addReadyTextDocument } from '../providers/voice/local-helpers.js';
import { ownerWithVoice, startVoiceApp, voiceAssistant } from '../voice/helpers.js';
import { api, DOCUMENT, runScenarios, waitForRun } from './helpers.js';

/**
 * Phone scenarios: each one a simulated carrier call (μ-law media stream, signed upgrade, keypad presses) on the
 * server's own phone-stream socket, here against the echo simulator. Ten at concurrency 3 complete, each with its
 * turn latency as the caller heard it and the call ended by the caller.
 */
t.test('a run of 10 phone scenarios at concurrency 3 completes', async (t) => {
  const app = await startTestApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  for (let i = 0; i < 10; i++) {
    const res = await api(app.url, 'POST', `/api/v1/assistants/${assistant.id}/scenarios`, owner.secret, {
      name: `call ${i}`,
      transport: 'phone',
      turns: [{ say: 'Hello, I would like to book a table' }, { press: '1#' }],
      expect: [{ maxTurnLatencyMs: 20_000 }, { endReason: 'client' }],
    });
    if (res.status !== 201) t.fail(`call ${i} refused: ${res.text}`);
  }
  const started = Date.now();
  const runs = `/api/v1/assistants/${assistant.id}/scenario-runs`;
  const main = await api(app.url, 'POST', runs, owner.secret, { concurrency: 3 });
  t.equal(main.status, 202, main.text);
  const second = await api(app.url, 'POST', runs, owner.secret, { scenarios: ['call 0'] });
  t.equal(second.status, 202, 'a second run of the assistant may run beside it');
  t.match(await api(app.url, 'POST', runs, owner.secret, { scenarios: ['call 1'] }), {
    status: 409,
    body: { code: 'SCENARIO_RUN_BUSY', details: { maxActiveRuns: 2 } },
  });
  const { run, results } = await waitForRun(app.url, owner.secret, assistant.id, main.body.run.id, 150_000);
  t.match((await waitForRun(app.url, owner.secret, assistant.id, second.body.run.id)).run, { status: 'done' });
  t.comment(
    `10 phone scenarios at concurrency 3: ${Date.now() - started} ms; turn p50 ${run.figures.turnLatencyP50Ms} ms`,
  );
  t.match(run, { status: 'done', scenarioCount: 10, completedCount: 10, figures: { passRate: 1, passed: 10 } });
  for (const r of results) {
    t.match(r, { transport: 'phone', status: 'passed', figures: { endReason: 'client', turnLatenciesMs: [Number] } });
    t.match(r.transcript, [{ role: 'caller', text: 'Hello, I would like to book a table' }]);
  }
  const calls = await app.database.sql<Array<{ source: string; n: number }>>`
    select source, count(*)::int as n from voice_sessions where assistant_id = ${assistant.id} group by source`;
  t.same([...calls], [{ source: 'test', n: 11 }], 'eleven calls (the two runs), all of source test');
});

/**
 * Offline with the local voice: the simulated carrier listens back to the answer's μ-law 8 kHz audio, as the media
 * stream brought it, with the local recognizer. The verdict stands on the assistant's own transcript; what the caller
 * recognized is kept beside the assistant's line and in the evidence.
 */
t.test('a phone scenario recognizes the answer audio it received and keeps the words as evidence', async (t) => {
  const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local' } });
  t.equal(app.deps.voiceProvider?.kind, 'local');
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);
  const res = await api(app.url, 'POST', `/api/v1/assistants/${assistant.id}/scenarios`, owner.secret, {
    name: 'price by phone',
    transport: 'phone',
    turns: [{ say: 'How much does the premium plan cost' }],
    expect: [{ neverSay: 'euros per month' }],
  });
  t.equal(res.status, 201, res.text);

  const { results } = await runScenarios(app.url, owner.secret, assistant.id, {}, 120_000);
  const [result] = results;
  t.comment(JSON.stringify(result));
  t.match(result, {
    transport: 'phone',
    status: 'failed',
    transcript: [
      { role: 'caller', text: 'How much does the premium plan cost', heard: /\w/ },
      { role: 'assistant', text: /4\.99 euros per month/, heard: /\w/ },
    ],
  });
  const heard: string = result.transcript[1].heard;
  t.comment(`the caller heard the answer over the phone as: "${heard}"`);
  t.notMatch(heard, /4\.99/, "the caller's own recognizer, not the assistant's transcript");
  const answerWords = /^(premium|plan|costs|four|ninety|nine|euros|per|month|includes|unlimited|notebooks)$/;
  t.ok(
    heard.split(' ').some((word) => answerWords.test(word)),
    'it heard words of the answer',
  );
  t.ok(
    result.verdicts[0].evidence.includes(`(the caller heard: "${heard}")`),
    `the recognized words are in the evidence: ${result.verdicts[0].evidence}`,
  );
});

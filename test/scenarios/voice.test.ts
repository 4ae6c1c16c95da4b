import t from 'tap';
import { addReadyTextDocument } from '../providers/voice/local-helpers.js';
import { ownerWithVoice, startVoiceApp, voiceAssistant } from '../voice/helpers.js';
import { api, DOCUMENT, runScenarios } from './helpers.js';

/**
 * Websocket scenarios over the real voice path, offline: the local voice (PocketSphinx + espeak-ng) answers, the
 * simulated caller speaks with espeak-ng on a real media socket of the server, and is judged on what the assistant
 * spoke, with what it heard of the caller kept as evidence.
 */
t.test(
  'voice scenarios: a fact said aloud passes, neverSay of it fails with the heard words, an interrupt is timed',
  async (t) => {
    const app = await startVoiceApp(t, { env: { VOICE_PROVIDER: 'local' } });
    t.equal(app.deps.voiceProvider?.kind, 'local');
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);
    const base = `/api/v1/assistants/${assistant.id}/scenarios`;
    const question = { say: 'How much does the premium plan cost' };
    const create = async (body: Record<string, unknown>) => {
      const res = await api(app.url, 'POST', base, owner.secret, { transport: 'websocket', ...body });
      t.equal(res.status, 201, res.text);
    };
    await create({
      name: 'price aloud',
      turns: [question],
      expect: [
        { mustSay: '/4\\.99 euros/' },
        { maxFirstAudioMs: 30_000 },
        { maxTurnLatencyMs: 30_000 },
        { endReason: 'client' },
      ],
    });
    await create({ name: 'price must not be said', turns: [question], expect: [{ neverSay: 'euros per month' }] });
    await create({
      name: 'talked over',
      turns: [question, { interrupt: 'How does the support team answer', afterMs: 300 }],
      expect: [{ stopsWithinMs: 3000 }, { mustSay: 'two days' }],
    });

    const { run, results } = await runScenarios(app.url, owner.secret, assistant.id, { concurrency: 3 }, 150_000);
    t.comment(
      JSON.stringify(
        results.map((r) => ({
          name: r.name,
          status: r.status,
          verdicts: r.verdicts,
          figures: r.figures,
          transcript: r.transcript,
          error: r.error,
        })),
      ),
    );
    t.match(run, { status: 'done', scenarioCount: 3, figures: { passed: 2, failed: 1, errored: 0 } });
    t.ok(run.figures.firstAudioP50Ms > 0, `time to first audio measured (${run.figures.firstAudioP50Ms} ms)`);
    t.ok(
      run.figures.stopAfterInterruptP50Ms !== null,
      `stop after interrupt measured (${run.figures.stopAfterInterruptP50Ms} ms)`,
    );
    const [price, never, over] = results;
    t.match(price, {
      status: 'passed',
      conversationId: /^conv_/,
      transcript: [
        { role: 'caller', text: 'How much does the premium plan cost', heard: /\w/ },
        { role: 'assistant', text: /4\.99 euros per month/, heard: /euros|premium|month|notebooks/ },
      ],
      figures: { endReason: 'client' },
    });
    t.comment(`the caller heard the answer as: "${price.transcript[1].heard}"`);
    t.match(never, {
      status: 'failed',
      verdicts: [
        {
          passed: false,
          evidence: /said "euros per month" in: .*\(the assistant heard: "[^"]+"\) \(the caller heard: "[^"]+"\)/,
        },
      ],
    });
    t.match(over, { status: 'passed', figures: { stopAfterInterruptMs: [Number] } });
    t.ok(
      over.figures.stopAfterInterruptMs[0] <= 3000,
      `stopped ${over.figures.stopAfterInterruptMs[0]} ms after the caller began`,
    );

    const sessions = await app.database.sql<Array<{ source: string }>>`
    select distinct source from voice_sessions where assistant_id = ${assistant.id}`;
    t.same(
      sessions.map((s) => s.source),
      ['test'],
      'the calls are of source test',
    );
  },
);

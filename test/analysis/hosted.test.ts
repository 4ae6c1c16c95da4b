import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
import { api, eventually, startReceiver, startWebhookApp } from '../webhooks/helpers.js';
import { ANALYSIS, verifiedPayloads } from './helpers.js';

t.test(
  'with the OpenAI-compatible provider: structured JSON validated, violations dropped, a slow step null',
  async (t) => {
    const sim = await startChatSimulator(t);
    const app = await startWebhookApp(t, {
      env: {
        CHAT_PROVIDER: 'openai',
        OPENAI_BASE_URL: sim.baseUrl,
        OPENAI_API_KEY: 'sk-upstream-secret',
        OPENAI_MODEL: 'gpt-4o-mini',
        OPENAI_TIMEOUT_MS: '5000',
      },
    });
    const receiver = await startReceiver(t);
    const owner = await createOwner(app.database.sql);
    const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
      url: receiver.url,
      events: ['conversation.analyzed'],
    });
    const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, {
      name: 'Orders',
      settings: { analysis: { ...ANALYSIS, timeoutMs: 2000 } },
    });
    t.equal(created.status, 201, created.text);
    sim.script({ kind: 'stream', pieces: ['Your order ships ', 'tomorrow.'] });
    const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
      assistantId: created.body.assistant.id,
      message: 'When does order 48213 ship? Call me back please.',
    });
    t.equal(chat.status, 200, chat.text);
    const conversationId = chat.body.conversationId as string;

    // One request per step, in order: summary, structured data, success, sentiment (this one never answers in time).
    sim.script(
      { kind: 'stream', pieces: ['The caller asked when order 48213 ships; it ships tomorrow.'] },
      {
        kind: 'stream',
        pieces: [
          'Here you go:\n```json\n{"orderNumber": 48213, "callbackRequested": true, ',
          '"email": "not-an-email", "plan": "gold", "shoeSize": 44}\n```',
        ],
      },
      { kind: 'stream', pieces: ['{"verdict": true, "rationale": "The caller learnt when the order ships."}'] },
      { kind: 'slow', delayMs: 5_000 },
    );
    const rerun = await api(app.url, 'POST', `/api/v1/conversations/${conversationId}/analysis`, owner.secret);
    t.equal(rerun.status, 202, rerun.text);
    await eventually(() => receiver.received.length > 0, 'the conversation.analyzed webhook', 15_000);
    const [payload] = verifiedPayloads(receiver, endpoint.body.secret);
    const analysis = payload.data.analysis;
    t.match(analysis, {
      status: 'done',
      engine: 'openai',
      model: 'gpt-4o-mini',
      summary: 'The caller asked when order 48213 ships; it ships tomorrow.',
      successEvaluation: { rubric: 'pass_fail', verdict: true, rationale: /ships/ },
      sentiment: null,
    });
    t.same(
      analysis.structuredData,
      { orderNumber: 48213, callbackRequested: true, email: null, plan: null },
      'only the values that validate against the schema are kept',
    );
    const data = analysis.steps.find((s: any) => s.step === 'structuredData');
    t.equal(data.status, 'ok');
    t.match(data.notes, [
      /"email": expected an email address.*dropped/,
      /"plan": expected one of "basic", "premium".*dropped/,
      /"shoeSize" is not in the schema; dropped/,
    ]);
    t.match(
      analysis.steps.find((s: any) => s.step === 'sentiment'),
      {
        status: 'timed_out',
        reason: 'the step did not finish within 2000 ms',
      },
    );
    const schemaRequest = sim.requests.at(-3)!.body.messages!.at(-1)!.content;
    t.match(schemaRequest, /"orderNumber":\{"type":"integer"/, 'the schema is given to the model');
    t.match(schemaRequest, /Caller: When does order 48213 ship\?/, 'with the transcript');
    t.notOk(app.logs.text().includes('48213'), 'the transcript is never logged');
  },
);

import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { balanceOf, setPlan } from '../helpers/metering.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
import { api, eventually, startWebhookApp } from '../webhooks/helpers.js';

const SETTINGS = { summary: true, successEvaluation: { rubric: 'pass_fail' }, sentiment: true };

t.test(
  'hosted analysis is metered as chat usage of the assistant, inside the budget; the local engine is free',
  async (t) => {
    const sim = await startChatSimulator(t);
    const app = await startWebhookApp(t, {
      env: {
        CHAT_PROVIDER: 'openai',
        OPENAI_BASE_URL: sim.baseUrl,
        OPENAI_API_KEY: 'sk-upstream-secret',
        OPENAI_MODEL: 'gpt-4o-mini',
        HOSTED_USAGE_ENFORCEMENT: 'enforce',
      },
    });
    const { sql } = app.database;
    const owner = await createOwner(sql);
    await setPlan(sql, owner.accountId, 'pro');
    const hosted = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, {
      name: 'Hosted',
      settings: { analysis: SETTINGS },
    });
    const local = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, {
      name: 'Local',
      settings: { chatProvider: 'local', analysis: SETTINGS },
    });
    t.equal(hosted.status, 201, hosted.text);
    t.equal(local.status, 201, local.text);

    sim.script({ kind: 'stream', pieces: ['It ships tomorrow.'] });
    const chatHosted = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
      assistantId: hosted.body.assistant.id,
      message: 'When does order 48213 ship?',
    });
    const chatLocal = await api(app.url, 'POST', '/api/v1/chat', owner.secret, {
      assistantId: local.body.assistant.id,
      message: 'When does order 48213 ship? Thanks!',
    });
    t.equal(chatHosted.status, 200, chatHosted.text);
    t.equal(chatLocal.status, 200, chatLocal.text);
    const hostedConversation = chatHosted.body.conversationId as string;
    const localConversation = chatLocal.body.conversationId as string;

    /** Re-runs the analysis and waits for the run to be stored. */
    async function analyse(conversationId: string) {
      const queued = await api(app.url, 'POST', `/api/v1/conversations/${conversationId}/analysis`, owner.secret);
      t.equal(queued.status, 202, queued.text);
      return eventually(async () => {
        const got = await api(app.url, 'GET', `/api/v1/conversations/${conversationId}/analysis`, owner.secret);
        return got.body.analysis?.status === 'done' ? got.body.analysis : undefined;
      }, 'the analysis');
    }
    const analysisUsage = () =>
      sql<Array<{ assistantId: string; kind: string; costMicros: number; inputTokens: number }>>`
      select assistant_id, kind, cost_micros, input_tokens from usage_events
      where account_id = ${owner.accountId} and source = 'analysis' and outcome = 'settled' order by created_at`;

    const usage = { prompt_tokens: 2000, completion_tokens: 100 };
    sim.script(
      { kind: 'stream', pieces: ['The caller asked when order 48213 ships.'], usage },
      { kind: 'stream', pieces: ['{"verdict": true, "rationale": "Answered."}'], usage },
      { kind: 'stream', pieces: ['{"label": "neutral", "score": 0}'], usage },
    );
    const before = (await balanceOf(sql, owner.accountId))!;
    const paid = await analyse(hostedConversation);
    t.match(paid, { engine: 'openai', summary: /48213/, successEvaluation: { verdict: true } });
    t.ok(paid.costMicros > 0, 'the report says what the analysis cost');
    const events = await analysisUsage();
    t.equal(events.length, 3, 'one chat usage event per step, source analysis');
    t.ok(
      events.every((e) => e.assistantId === hosted.body.assistant.id && e.kind === 'chat' && e.inputTokens === 2000),
      "each is the assistant's chat usage, with the tokens the provider reported",
    );
    t.equal(
      events.reduce((n, e) => n + Number(e.costMicros), 0),
      paid.costMicros,
      'the usage ledger holds what the report says',
    );
    const after = (await balanceOf(sql, owner.accountId))!;
    t.equal(Number(after.consumedMicros) - Number(before.consumedMicros), paid.costMicros, 'spent from the budget');
    t.equal(after.requestCount, before.requestCount, "analysis does not count toward the callers' request cap");
    t.equal(Number(after.reservedMicros), 0, 'nothing is left reserved');

    // The budget is used up: the hosted analysis is not sent, and each step says why.
    await sql`update hosting_accounts set limit_override_micros = 1 where account_id = ${owner.accountId}`;
    const requestsBefore = sim.requests.length;
    const skipped = await analyse(hostedConversation);
    t.same(
      skipped.steps.map((s: any) => [s.step, s.status]),
      [
        ['summary', 'skipped'],
        ['successEvaluation', 'skipped'],
        ['sentiment', 'skipped'],
      ],
    );
    for (const step of skipped.steps) {
      t.match(step.reason, /^skipped: The usage budget for this billing period is used up\. \(USAGE_LIMIT_REACHED\)$/);
    }
    t.match(skipped, { summary: null, successEvaluation: null, sentiment: null, costMicros: 0 });
    t.equal(sim.requests.length, requestsBefore, 'nothing was sent to the provider');
    t.equal((await analysisUsage()).length, 3, 'nothing more was recorded');

    // The local engine costs nothing: it runs with the budget used up and records no usage.
    const free = await analyse(localConversation);
    t.match(free, { engine: 'local', costMicros: 0, summary: /48213/ });
    t.ok(
      free.steps.every((s: any) => s.status === 'ok'),
      'every step ran',
    );
    const [localUsage] = await sql<Array<{ count: number }>>`
    select count(*)::int as count from usage_events where source = 'analysis' and assistant_id = ${local.body.assistant.id}`;
    t.equal(localUsage!.count, 0, 'no usage is recorded for the local engine');
  },
);

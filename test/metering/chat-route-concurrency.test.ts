import t from 'tap';
import { priceChat } from '../../src/metering/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { balanceOf, createTestMeter, setPlan } from '../helpers/metering.js';
import { startChatSimulator, type Scenario } from '../providers/chat/simulator.js';
import { parseSse } from '../chat/helpers.js';
import { prng } from '../helpers/random.js';

const MODEL = 'gpt-4o-mini';
const LIMIT = 1_000_000;
/** What is left of the period when the burst starts: room for a few dozen answers at most, never all 100. */
const REMAINING = 30_000;
const REQUESTS = 100;

/**
 * The property test of test/metering/concurrency.test.ts, through the real route: POST /api/v1/chat with a
 * `chat` key, enforce mode, the openai provider (the loopback simulator) on a priced model. The reservation is the
 * prompt plus HOSTED_USAGE_MAX_OUTPUT_TOKENS of output; each answer costs what the simulator reports.
 */
const sim = await startChatSimulator(t);
const app = await startTestApp(t, {
  env: {
    HOSTED_USAGE_ENFORCEMENT: 'enforce',
    CHAT_PROVIDER: 'openai',
    OPENAI_BASE_URL: sim.baseUrl,
    OPENAI_API_KEY: 'sk-upstream-test',
    OPENAI_MODEL: MODEL,
    // The burst is one key; the per-key request rate limit is not under test here.
    API_RATE_LIMIT_PER_MINUTE: '100000',
    // Nor is admission control: the whole burst waits its turn instead of being shed with 503s.
    ADMISSION_QUEUE_PER_TENANT: '1000',
    ADMISSION_QUEUE_WAIT_MS: '60000',
    DATABASE_POOL_SIZE: '16',
  },
});
const { sql } = app.deps;
const { meter: warmupMeter } = createTestMeter(sql);

for (const seed of [3, 2024, Date.now() % 100_000]) {
  t.test(`${REQUESTS} concurrent chat requests near the budget (seed ${seed})`, async (t) => {
    const random = prng(seed);
    // A plan whose request cap cannot interfere (pro: 15,000), with a budget override of LIMIT.
    const owner = await createOwner(sql, { scopes: ['chat', 'assistants:write'] });
    await setPlan(sql, owner.accountId, 'pro', LIMIT);
    const created = await fetch(`${app.url}/api/v1/assistants`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Burst ${seed}`, instructions: 'Answer briefly.' }),
    });
    t.equal(created.status, 201);
    const { assistant } = (await created.json()) as { assistant: { id: string } };
    // Earlier spend this period (not a request): only REMAINING micros are left.
    const warmup = await warmupMeter.admit({
      accountId: owner.accountId,
      kind: 'chat',
      source: 'api',
      audience: 'owner',
      estimateMicros: LIMIT - REMAINING,
      countsAsRequest: false,
    });
    await warmupMeter.settle(warmup, { actualMicros: LIMIT - REMAINING });

    // What the provider will report per answer: output within the max_tokens it was sent (as a real provider does).
    const usages = Array.from({ length: REQUESTS }, () => ({
      prompt_tokens: 40 + Math.floor(random() * 80),
      completion_tokens: 800 + Math.floor(random() * 1200),
    }));
    const maxActual = Math.max(...usages.map((u) => priceChat(MODEL, u.prompt_tokens, u.completion_tokens)));
    const scenarios: Scenario[] = usages.map((usage, i) => ({
      kind: 'stream',
      pieces: ['Answer ', String(i)],
      delayMs: Math.floor(random() * 10),
      usage,
    }));
    sim.script(...scenarios);
    const requestsBefore = sim.requests.length;

    const results = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const sse = i % 3 === 0;
        const res = await fetch(`${app.url}/api/v1/chat`, {
          method: 'POST',
          headers: {
            ...bearer(owner.secret),
            'content-type': 'application/json',
            ...(sse ? { accept: 'text/event-stream' } : {}),
          },
          body: JSON.stringify({ assistantId: assistant.id, message: `Question number ${i}?` }),
        });
        if (res.status !== 200)
          return {
            status: res.status,
            body: (await res.json()) as { code: string; reason?: string; details?: { limitMicros?: number } },
          };
        if (!sse) return { status: 200, messageId: ((await res.json()) as { messageId: string }).messageId };
        const events = parseSse(await res.text());
        const meta = events.find((e) => e.event === 'meta')?.data as { messageId: string } | undefined;
        return { status: 200, messageId: meta?.messageId, sseEvents: events.map((e) => e.event) };
      }),
    );

    const answered = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    t.ok(answered.length > 0, `some requests fit (${answered.length} answered)`);
    t.ok(refused.length > 0, `the budget refused the rest (${refused.length} refused)`);
    t.ok(
      answered.every((r) => typeof r.messageId === 'string'),
      'every 200 is a complete answer (JSON, or SSE ending in meta and done)',
    );
    t.ok(
      refused.every(
        (r) =>
          r.status === 402 &&
          r.body?.reason === 'usage_limit' &&
          r.body.code === 'USAGE_LIMIT_REACHED' &&
          r.body.details?.limitMicros === LIMIT,
      ),
      'every refusal is 402 usage_limit with the limit, for the owner',
    );
    t.equal(sim.requests.length - requestsBefore, answered.length, 'a refused request never reaches the provider');

    const balance = await balanceOf(sql, owner.accountId);
    t.ok(
      balance!.consumedMicros <= LIMIT + maxActual,
      `spend ${balance!.consumedMicros} within the limit ${LIMIT} + one request (${maxActual})`,
    );
    t.equal(balance!.reservedMicros, 0, 'nothing left held');
    t.equal(balance!.requestCount, answered.length, 'each answered request is counted once; refused ones not at all');

    const events = await sql<
      Array<{ reservationId: string; outcome: string; costMicros: number; inputTokens: number; outputTokens: number }>
    >`
      select reservation_id, outcome, cost_micros, input_tokens, output_tokens from usage_events
      where account_id = ${owner.accountId} and assistant_id = ${assistant.id} and kind = 'chat'`;
    t.equal(
      events.length,
      answered.length,
      'usage events == 200 answers: every admitted request settled, refused ones left no trace',
    );
    t.equal(new Set(events.map((e) => e.reservationId)).size, events.length, 'one event per reservation');
    t.ok(
      events.every((e) => e.outcome === 'settled'),
      'every event is a settle',
    );
    t.ok(
      events.every((e) => e.costMicros === priceChat(MODEL, e.inputTokens, e.outputTokens)),
      'each event is priced from the tokens the provider reported',
    );
    t.equal(
      balance!.consumedMicros,
      LIMIT - REMAINING + events.reduce((sum, e) => sum + e.costMicros, 0),
      'spend is exactly the earlier spend plus the settled costs',
    );

    // What the owner sees on each answer matches what was billed for it.
    const messageIds = answered.map((r) => r.messageId!);
    const messages = await sql<
      Array<{ costMicros: number }>
    >`select cost_micros from messages where id in ${sql(messageIds)}`;
    t.equal(messages.length, answered.length, 'every answer is stored');
    t.same(
      messages.map((m) => m.costMicros).sort((a, b) => a - b),
      events.map((e) => e.costMicros).sort((a, b) => a - b),
      'the cost stored on each answer is the cost settled for it',
    );

    const [open] = await sql<
      [{ n: number }]
    >`select count(*)::int8 as n from usage_reservations where account_id = ${owner.accountId} and status = 'open'`;
    t.equal(open.n, 0, 'no reservation left open');
  });
}

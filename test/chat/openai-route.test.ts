import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { startChatSimulator } from '../providers/chat/simulator.js';
import { parseSse } from './helpers.js';

t.test('POST /api/v1/chat over the openai provider (simulator on loopback)', async (t) => {
  const sim = await startChatSimulator(t);
  const { url, deps, logs } = await startTestApp(t, {
    env: {
      CHAT_PROVIDER: 'openai',
      OPENAI_BASE_URL: sim.baseUrl,
      OPENAI_API_KEY: 'sk-upstream-secret',
      OPENAI_MODEL: 'gpt-4o-mini',
      OPENAI_TIMEOUT_MS: '300',
    },
  });
  const owner = await createOwner(deps.sql);
  const created = await fetch(`${url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Model backed', instructions: 'Always be brief.' }),
  });
  const { assistant } = (await created.json()) as { assistant: { id: string } };
  const chat = (accept?: string) =>
    fetch(`${url}/api/v1/chat`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json', ...(accept ? { accept } : {}) },
      body: JSON.stringify({ assistantId: assistant.id, message: 'Say hello' }),
    });

  t.test('JSON: the streamed chunks become one answer; tokens and cost are stored', async (t) => {
    sim.script({
      kind: 'stream',
      pieces: ['Hello', ', ', 'friend.'],
      usage: { prompt_tokens: 200, completion_tokens: 3 },
    });
    const res = await chat();
    t.equal(res.status, 200);
    const body = (await res.json()) as { answer: string; messageId: string };
    t.equal(body.answer, 'Hello, friend.');
    const system = sim.requests.at(-1)!.body.messages![0]!;
    t.equal(system.role, 'system');
    t.match(system.content, /Always be brief\./, 'the owner instructions reach the model');
    const [row] = await deps.sql<
      Array<{ inputTokens: number; outputTokens: number; costMicros: number; provider: string; model: string }>
    >`
      select input_tokens, output_tokens, cost_micros, provider, model from messages where id = ${body.messageId}`;
    t.same(
      { ...row },
      { inputTokens: 200, outputTokens: 3, costMicros: row!.costMicros, provider: 'openai', model: 'gpt-4o-mini' },
    );
    t.ok(row!.costMicros > 0, 'a priced model call has a cost');
  });

  t.test('SSE: a connection dropped after the first tokens becomes an error event, then done', async (t) => {
    sim.script({ kind: 'drop', pieces: ['Part', 'ial'] });
    const res = await chat('text/event-stream');
    t.equal(res.status, 200);
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event);
    t.ok(
      names.slice(0, -2).length > 0 && names.slice(0, -2).every((n) => n === 'token'),
      `tokens first (${names.join(',')})`,
    );
    t.equal(
      events
        .filter((e) => e.event === 'token')
        .map((e) => (e.data as { text: string }).text)
        .join(''),
      'Partial',
      'the text that arrived was sent',
    );
    t.equal(events.at(-1)?.event, 'done', 'the stream is closed properly with done');
    t.equal(events.at(-2)?.event, 'error', 'an error event before done');
    t.equal((events.at(-2)?.data as { code: string }).code, 'CHAT_STREAM_INTERRUPTED');
    t.notOk(
      events.some((e) => e.event === 'meta'),
      'no meta after a failure',
    );
    const stored = await deps.sql<
      Array<{ outcome: string; content: string }>
    >`select outcome, content from messages where role = 'assistant' order by seq desc limit 1`;
    t.equal(stored[0]?.outcome, 'model_failure', 'the failure is recorded');
    t.equal(stored[0]?.content, 'Partial');
  });

  t.test('a failure before the answer began is a plain HTTP error (JSON and SSE alike)', async (t) => {
    sim.script({ kind: 'status', status: 503 });
    const json = await chat();
    t.equal(json.status, 502);
    const body = (await json.json()) as { code: string; error: string };
    t.equal(body.code, 'CHAT_PROVIDER_FAILED');
    t.notMatch(
      JSON.stringify(body),
      /sk-upstream-secret|simulated failure/,
      'neither the key nor the upstream text leaks',
    );
    const sse = await chat('text/event-stream');
    t.equal(sse.status, 502, 'SSE answers a status, not a stream, when nothing was sent yet');
    sim.script({ kind: 'slow', delayMs: 2000 });
    const slow = await chat();
    t.equal(slow.status, 504);
    t.equal(((await slow.json()) as { code: string }).code, 'CHAT_PROVIDER_TIMEOUT');
  });

  t.test('neither the upstream key nor what visitors say is logged', async (t) => {
    sim.script({ kind: 'status', status: 401 });
    t.equal((await chat()).status, 502);
    const text = logs.text();
    t.match(text, /chat provider failed/, 'the failure itself is logged');
    t.notMatch(text, /sk-upstream-secret/, 'no upstream key');
    t.notMatch(text, /Say hello/, 'no message text');
  });
});

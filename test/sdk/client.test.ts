import t from 'tap';
import { createParleyClient, ParleyError, streamChat, type ParleyClient } from '../../sdk/src/index.js';
import { SCOPES } from '../../src/auth/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOwner, type TestOwner } from '../helpers/identity.js';
import { waitFor } from '../helpers/wait.js';
import { startChatSimulator } from '../providers/chat/simulator.js';

/**
 * Compile-time proof that wrong request shapes are refused: `npm run typecheck` fails if any of these lines
 * compiles (an unused @ts-expect-error is itself an error). Never called at run time.
 */
export async function wrongShapesDoNotCompile(parley: ParleyClient): Promise<void> {
  // @ts-expect-error -- not a documented path
  await parley.GET('/api/v1/assistant');
  // @ts-expect-error -- chat is POST only
  await parley.GET('/api/v1/chat');
  // @ts-expect-error -- the body needs a name
  await parley.POST('/api/v1/assistants', { body: { description: 'no name' } });
  // @ts-expect-error -- message must be a string
  await parley.POST('/api/v1/chat', { body: { assistantId: 'asst_x', message: 42 } });
  // @ts-expect-error -- the path parameter is required
  await parley.GET('/api/v1/assistants/{assistantId}');
  // @ts-expect-error -- and it is named assistantId
  await parley.GET('/api/v1/assistants/{assistantId}', { params: { path: { id: 'x' } } });
  const created = await parley.POST('/api/v1/assistants', { body: { name: 'typed' } });
  // @ts-expect-error -- the answer is typed too: no such field
  void created.nonexistent;
}

/** One service for the cases that need no special configuration. */
let shared: Promise<{ app: TestApp; owner: TestOwner }> | undefined;
function sharedApp() {
  shared ??= (async () => {
    const app = await startTestApp(t);
    return { app, owner: await createOwner(app.database.sql, { scopes: SCOPES }) };
  })();
  return shared;
}

t.test('the typed client against a real Parley: CRUD, typed errors, chat streaming', async (t) => {
  const { app, owner } = await sharedApp();
  const parley = createParleyClient({ baseUrl: app.url, apiKey: owner.secret });

  const { assistant: created } = await parley.POST('/api/v1/assistants', {
    body: { name: 'SDK assistant', instructions: 'Be brief.' },
  });
  t.equal(created.name, 'SDK assistant');
  t.match(created.publicId, /^asst_/);
  const { assistant: fetched } = await parley.GET('/api/v1/assistants/{assistantId}', {
    params: { path: { assistantId: created.id } },
  });
  t.equal(fetched.id, created.id);
  const patched = await parley.PATCH('/api/v1/assistants/{assistantId}', {
    params: { path: { assistantId: created.id } },
    body: { name: 'Renamed' },
  });
  t.equal(patched.assistant.name, 'Renamed');
  const list = await parley.GET('/api/v1/assistants');
  t.ok(
    list.assistants.some((a) => a.id === created.id),
    'the list has it',
  );

  const missing = await parley
    .GET('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: 'asst_doesnotexist' } } })
    .catch((e: unknown) => e);
  t.ok(missing instanceof ParleyError, 'a 404 throws ParleyError');
  t.match(missing, { status: 404, code: /NOT_FOUND/, requestId: /.+/ });

  const invalid = await parley.POST('/api/v1/assistants', { body: { name: '' } }).catch((e: unknown) => e);
  t.match(invalid, { status: 400, code: 'VALIDATION_FAILED' });
  t.ok((invalid as ParleyError).details, 'validation details are kept');

  const stranger = createParleyClient({ baseUrl: app.url, apiKey: 'sk_live_notakey' });
  t.match(await stranger.GET('/api/v1/assistants').catch((e: unknown) => e), { status: 401, reason: undefined });

  const nowhere = createParleyClient({ baseUrl: 'http://127.0.0.1:1' });
  t.match(await nowhere.GET('/api/v1/assistants').catch((e: unknown) => e), { status: 0, code: 'NETWORK_ERROR' });

  const answer = await parley.POST('/api/v1/chat', { body: { assistantId: created.publicId, message: 'Hello there' } });
  t.type(answer.answer, 'string');
  const events = [];
  for await (const event of streamChat(parley, {
    assistantId: created.publicId,
    message: 'Hello again',
    conversationId: answer.conversationId,
  }))
    events.push(event);
  t.ok(events.filter((e) => e.type === 'token').length > 0, 'tokens streamed');
  t.match(events.at(-2), { type: 'meta', conversationId: answer.conversationId, outcome: /answered|no_answer/ });
  t.match(events.at(-1), { type: 'done' });

  await parley.DELETE('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: created.id } } });
  t.match(
    await parley
      .GET('/api/v1/assistants/{assistantId}', { params: { path: { assistantId: created.id } } })
      .catch((e: unknown) => e),
    { status: 404 },
  );
});

t.test('429 is thrown with retryAfterMs, or retried after Retry-After when asked to', async (t) => {
  // The per-key rate limit of a real Parley: 2 requests a minute, so the third waits ~30 s: not retried (above maxDelayMs).
  const app = await startTestApp(t, { env: { API_RATE_LIMIT_PER_MINUTE: '2' } });
  const owner = await createOwner(app.database.sql);
  const plain = createParleyClient({ baseUrl: app.url, apiKey: owner.secret });
  await plain.GET('/api/v1/assistants');
  await plain.GET('/api/v1/assistants');
  const refused = (await plain.GET('/api/v1/assistants').catch((e: unknown) => e)) as ParleyError;
  t.match(refused, { status: 429, reason: undefined, isRateLimited: true });
  t.ok(refused.retryAfterMs! >= 1000, `Retry-After surfaced (${refused.retryAfterMs} ms)`);

  const patient = createParleyClient({
    baseUrl: app.url,
    apiKey: owner.secret,
    retry: { maxRetries: 3, maxDelayMs: 1000 },
  });
  const impatient = await patient.GET('/api/v1/assistants').catch((e: unknown) => e);
  t.match(impatient, { status: 429 }, 'a Retry-After above maxDelayMs is not waited for');

  // With a higher ceiling the client waits what the server said and gets through.
  const waits: number[] = [];
  const timed = createParleyClient({
    baseUrl: app.url,
    apiKey: owner.secret,
    retry: { maxRetries: 1, maxDelayMs: 60_000 },
    fetch: async (input, init) => {
      waits.push(Date.now());
      return fetch(input, init);
    },
  });
  const controller = new AbortController();
  const pending = timed.GET('/api/v1/assistants', { signal: controller.signal }).catch((e: unknown) => e);
  // Retry-After here is tens of seconds: prove it is being waited for, then abort the wait rather than sit it out.
  await waitFor(() => waits.length === 1, 'the first attempt', 10_000);
  await new Promise((r) => setTimeout(r, 300));
  t.equal(waits.length, 1, 'one attempt so far: the client is waiting out Retry-After');
  controller.abort();
  t.match(await pending, { status: 0, code: 'ABORTED' }, 'an abort ends the wait');
});

t.test('retry: a 429 with Retry-After: 1 (heartbeat too frequent) is waited out and succeeds', async (t) => {
  const { app, owner } = await sharedApp();
  const parley = createParleyClient({ baseUrl: app.url, apiKey: owner.secret });
  const { assistant } = await parley.POST('/api/v1/assistants', {
    body: { name: 'Voice', settings: { voice: { enabled: true } } },
  });
  const minted = await parley.POST('/api/v1/voice/sessions', {
    body: { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
  });
  t.teardown(() =>
    parley
      .POST('/api/v1/voice/sessions/{sessionId}/end', { params: { path: { sessionId: minted.sessionId } }, body: {} })
      .catch(() => undefined),
  );
  const beat = (client: ParleyClient) =>
    client.POST('/api/v1/voice/sessions/{sessionId}/heartbeat', {
      params: { path: { sessionId: minted.sessionId } },
      body: { token: minted.controlToken },
    });
  t.match(await beat(parley), { status: 'healthy' });
  t.match(
    await beat(parley).catch((e: unknown) => e),
    { status: 429, retryAfterMs: 1000 },
    'without retry the 429 is thrown',
  );
  const retrying = createParleyClient({ baseUrl: app.url, retry: true });
  t.match(await beat(retrying), { status: 'healthy' }, 'with retry it waits Retry-After and gets through');
});

t.test('retry: a 503 SERVICE_OVERLOADED with Retry-After is waited out; without retry it is thrown', async (t) => {
  // One chat slot and no queue on a real Parley; the upstream holds the first chat 1.5 s, so a second is refused 503.
  const sim = await startChatSimulator(t);
  sim.script(
    { kind: 'slow', delayMs: 1500, then: { kind: 'stream', pieces: ['Open', ' nine to five.'] } },
    {
      kind: 'stream',
      pieces: ['Open', ' nine to five.'],
    },
  );
  const app = await startTestApp(t, {
    env: {
      CHAT_PROVIDER: 'openai',
      OPENAI_BASE_URL: sim.baseUrl,
      OPENAI_API_KEY: 'sk-upstream-test',
      ADMISSION_MAX_IN_FLIGHT: '1',
      ADMISSION_QUEUE_PER_TENANT: '0',
      API_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
  const owner = await createOwner(app.database.sql);
  const plain = createParleyClient({ baseUrl: app.url, apiKey: owner.secret });
  const { assistant } = await plain.POST('/api/v1/assistants', { body: { name: 'Busy' } });
  const ask = (client: ParleyClient) =>
    client.POST('/api/v1/chat', { body: { assistantId: assistant.publicId, message: 'When are you open?' } });

  const holding = ask(plain);
  await waitFor(() => sim.requests.length === 1, 'the first chat holds the only slot', 10_000);
  t.match(
    await ask(plain).catch((e: unknown) => e),
    { status: 503, code: 'SERVICE_OVERLOADED', retryAfterMs: 1000 },
    'without retry the 503 is thrown, with its Retry-After',
  );

  const statuses: number[] = [];
  const retrying = createParleyClient({
    baseUrl: app.url,
    apiKey: owner.secret,
    retry: true,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      return res;
    },
  });
  t.match(await ask(retrying), { answer: /nine to five/ }, 'with retry: true it waits Retry-After and is answered');
  t.equal(statuses[0], 503, 'its first attempt was refused');
  t.equal(statuses.at(-1), 200, 'a later one answered');
  t.match(await holding, { answer: /nine to five/ });
});

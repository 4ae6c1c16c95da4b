import t from 'tap';
import {
  createOpenAiProvider,
  type ChatCompletionRequest,
  type ChatProviderError,
} from '../../../src/providers/chat/index.js';
import { startChatSimulator } from './simulator.js';

const request: ChatCompletionRequest = {
  messages: [{ role: 'user', content: 'hi' }],
  passages: [],
  question: 'hi',
  voiceUnavailable: false,
  maxOutputTokens: 99,
};

async function collect(provider: ReturnType<typeof createOpenAiProvider>, signal = new AbortController().signal) {
  const texts: string[] = [];
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  let error: ChatProviderError | undefined;
  try {
    for await (const ev of provider.stream(request, signal)) {
      if (ev.type === 'text') texts.push(ev.text);
      else usage = ev;
    }
  } catch (err) {
    error = err as ChatProviderError;
  }
  return { texts, usage, error };
}

const make = (baseUrl: string, extra: Partial<Parameters<typeof createOpenAiProvider>[0]> = {}) =>
  createOpenAiProvider({
    baseUrl,
    apiKey: 'sk-sim-secret',
    model: 'sim-1',
    timeoutMs: 1000,
    backoffBaseMs: 10,
    ...extra,
  });

t.test('streams chunks in order, with usage, and sends model, messages, max_tokens and the key', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({
    kind: 'stream',
    pieces: ['The ', 'refund ', 'window ', 'is 30 days.'],
    usage: { prompt_tokens: 120, completion_tokens: 9 },
  });
  const { texts, usage, error } = await collect(make(sim.baseUrl));
  t.equal(error, undefined);
  t.same(texts, ['The ', 'refund ', 'window ', 'is 30 days.']);
  t.same(usage, { type: 'usage', inputTokens: 120, outputTokens: 9 });
  t.equal(sim.requests.length, 1);
  const sent = sim.requests[0]!;
  t.equal(sent.headers.authorization, 'Bearer sk-sim-secret');
  t.equal(sent.body.model, 'sim-1');
  t.equal(sent.body.stream, true);
  t.equal(sent.body.max_tokens, 99);
  t.same(sent.body.messages, request.messages);
});

t.test('a 500 is retried, and the retry succeeds', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'status', status: 500 }, { kind: 'status', status: 503 }, { kind: 'stream', pieces: ['ok'] });
  const { texts, error } = await collect(make(sim.baseUrl));
  t.equal(error, undefined);
  t.same(texts, ['ok']);
  t.equal(sim.requests.length, 3, 'two retries');
});

t.test('persistent 5xx gives up after the retries as unavailable', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'status', status: 502 });
  const { error } = await collect(make(sim.baseUrl));
  t.equal(error?.failure, 'unavailable');
  t.equal(error?.status, 502);
  t.equal(sim.requests.length, 3, 'three attempts in all');
});

t.test('401 is authentication and is never retried; 400 is bad_request', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'status', status: 401 });
  const auth = await collect(make(sim.baseUrl));
  t.equal(auth.error?.failure, 'authentication');
  t.equal(sim.requests.length, 1);
  t.notMatch(auth.error?.message ?? '', /sk-sim-secret/, 'the key never appears in the error');
  sim.script({ kind: 'status', status: 400 });
  const bad = await collect(make(sim.baseUrl));
  t.equal(bad.error?.failure, 'bad_request');
  t.equal(sim.requests.length, 2);
});

t.test('429 honours Retry-After, and one too long is not waited for', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'status', status: 429, retryAfter: '0' }, { kind: 'stream', pieces: ['after wait'] });
  const ok = await collect(make(sim.baseUrl));
  t.same(ok.texts, ['after wait']);
  t.equal(sim.requests.length, 2);
  sim.script({ kind: 'status', status: 429, retryAfter: '120' });
  const started = Date.now();
  const refused = await collect(make(sim.baseUrl));
  t.equal(refused.error?.failure, 'rate_limited');
  t.ok(Date.now() - started < 1000, 'did not wait two minutes');
});

t.test('a slow upstream times out (each attempt), then fails as timeout', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'slow', delayMs: 1500 });
  const { error } = await collect(make(sim.baseUrl, { timeoutMs: 150, maxRetries: 1 }));
  t.equal(error?.failure, 'timeout');
  t.equal(sim.requests.length, 2, 'retried once');
});

t.test('a slow upstream within the timeout is fine', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'slow', delayMs: 100, then: { kind: 'stream', pieces: ['eventually'] } });
  const { texts, error } = await collect(make(sim.baseUrl, { timeoutMs: 1000 }));
  t.equal(error, undefined);
  t.same(texts, ['eventually']);
});

t.test('a connection dropped mid-stream is interrupted, after the text that arrived, and never retried', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'drop', pieces: ['Half ', 'an '] });
  const { texts, error } = await collect(make(sim.baseUrl));
  t.same(texts, ['Half ', 'an ']);
  t.equal(error?.failure, 'interrupted');
  t.equal(sim.requests.length, 1, 'no retry once text was yielded');
});

t.test('a stream that stalls mid-way is interrupted by the chunk timeout', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'stall', pieces: ['Some '] });
  const { texts, error } = await collect(make(sim.baseUrl, { timeoutMs: 200 }));
  t.same(texts, ['Some ']);
  t.equal(error?.failure, 'interrupted');
});

t.test('a stream that ends without [DONE] is interrupted', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'truncated', pieces: ['cut'] });
  const { error } = await collect(make(sim.baseUrl));
  t.equal(error?.failure, 'interrupted');
});

t.test('no server listening: connection failure after the retries', async (t) => {
  const sim = await startChatSimulator(t);
  const dead = sim.baseUrl.replace(/:\d+\//, ':1/');
  const { error } = await collect(make(dead, { maxRetries: 1 }));
  t.equal(error?.failure, 'connection');
});

t.test('the caller aborting stops a backoff wait at once', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'status', status: 500 });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const started = Date.now();
  const { error } = await collect(make(sim.baseUrl, { backoffBaseMs: 5000 }), controller.signal);
  t.equal(error?.failure, 'aborted');
  t.ok(Date.now() - started < 2000, 'did not sit out the backoff');
});

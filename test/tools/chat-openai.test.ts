import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { parseSse } from '../chat/helpers.js';
import { api, eventually, orderStatusTool, startModelStub, startToolReceiver } from './helpers.js';

/** The OpenAI-compatible provider's tool loop against a stub model that answers `tool_calls`. */
t.test('chat over an OpenAI-compatible model that calls tools', async (t) => {
  const model = await startModelStub(t);
  const app = await startTestApp(t, {
    env: {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      CHAT_PROVIDER: 'openai',
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_MODEL: 'gpt-4o-mini',
      OPENAI_TIMEOUT_MS: '5000',
    },
  });
  const receiver = await startToolReceiver(t);
  const owner = await createOwner(app.database.sql);
  const { body } = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Shop' });
  const assistantId: string = body.assistant.id;
  const tools = `/api/v1/assistants/${assistantId}/tools`;
  const orderStatus = await api(app.url, 'POST', tools, owner.secret, orderStatusTool(receiver.url));
  const chat = (message: string, stream = false) =>
    fetch(`${app.url}/api/v1/chat`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.secret}`,
        'content-type': 'application/json',
        ...(stream ? { accept: 'text/event-stream' } : {}),
      },
      body: JSON.stringify({ assistantId, message }),
    });

  t.test('two parallel calls in one round, their results given back, then the answer', async (t) => {
    model.requests.length = 0;
    receiver.received.length = 0;
    model.script(
      {
        calls: [
          { name: 'order_status', arguments: '{"orderId":"12345"}' },
          { name: 'order_status', arguments: '{"orderId":"777"}' },
        ],
      },
      { text: 'Order 12345 has shipped; 777 too.' },
    );
    const res = await chat('Where are orders 12345 and 777?', true);
    t.equal(res.status, 200);
    const events = parseSse(await res.text());
    t.same(
      events.map((e) => e.event),
      ['tool', 'tool', 'tool', 'tool', 'token', 'meta', 'done'],
      'tool events while the tools run, then the answer',
    );
    t.same(receiver.received.map((r) => r.json.arguments.orderId).sort(), ['12345', '777']);
    const [first, second] = model.requests;
    t.same(
      first!.tools!.map((x) => x['function'].name),
      ['order_status'],
      'the tools are offered to the model',
    );
    t.match(first!.tools![0]!['function'].parameters, { properties: { orderId: { type: 'string' } } });
    const replies = second!.messages.filter((m) => m['role'] === 'tool');
    t.equal(replies.length, 2, 'both results go back to the model');
    t.same(JSON.parse(replies[0]!['content']), { result: { status: 'shipped', eta: '2026-12-01' } });
    t.match(
      second!.messages.find((m) => m['tool_calls']),
      { role: 'assistant', tool_calls: [{ id: 'call_0' }, {}] },
    );
    const meta = events.find((e) => e.event === 'meta')!.data as { conversationId: string };
    const conversation = await api(app.url, 'GET', `/api/v1/conversations/${meta.conversationId}`, owner.secret);
    t.equal(conversation.body.toolCalls.length, 2, 'both calls are conversation items');
  });

  t.test('invalid arguments never reach the receiver; the model is told why', async (t) => {
    model.requests.length = 0;
    receiver.received.length = 0;
    model.script(
      { calls: [{ name: 'order_status', arguments: '{"orderId":12345,"note":"x"}' }] },
      { calls: [{ name: 'no_such_tool', arguments: '{}' }] },
      { text: 'I could not look that up.' },
    );
    const res = await chat('Where is order 12345?');
    t.equal(res.status, 200);
    t.equal(receiver.received.length, 0, 'nothing was sent');
    const told = model.requests[1]!.messages.filter((m) => m['role'] === 'tool');
    t.match(JSON.parse(told[0]!['content']).error, /invalid arguments: arguments\.orderId must be a string/);
    t.match(JSON.parse(model.requests[2]!.messages.at(-1)!['content']).error, /there is no tool named no_such_tool/);
    const answer = (await res.json()) as { conversationId: string };
    const conversation = await api(app.url, 'GET', `/api/v1/conversations/${answer.conversationId}`, owner.secret);
    t.match(conversation.body.toolCalls, [
      { status: 'failed', error: /invalid arguments/, durationMs: Number, arguments: { orderId: 12345 } },
      { status: 'failed', name: 'no_such_tool' },
    ]);
  });

  t.test('at most five rounds: then the model answers without tools', async (t) => {
    model.requests.length = 0;
    receiver.received.length = 0;
    model.script(
      ...Array.from({ length: 5 }, () => ({ calls: [{ name: 'order_status', arguments: '{"orderId":"1"}' }] })),
      { text: 'Done.' },
    );
    const res = await chat('Loop please');
    t.equal(((await res.json()) as { answer: string }).answer, 'Done.');
    t.equal(receiver.received.length, 5, 'five rounds of calls');
    t.equal(model.requests.length, 6);
    t.notOk(model.requests[5]!.tools, 'the sixth request offers no tools');
  });

  t.test('a slow receiver times out, a redirect is not followed, a huge answer is refused', async (t) => {
    // The shortest timeout for the silent receiver only (a loaded machine may take longer than it for the others).
    const toolPath = `${tools}/${orderStatus.body.tool.id}`;
    const setTimeoutMs = (timeoutMs: number) => api(app.url, 'PATCH', toolPath, owner.secret, { timeoutMs });
    await setTimeoutMs(1000);
    const failures: string[] = [];
    for (const respond of [
      () => undefined, // never answers
      (_req: unknown, res: import('node:http').ServerResponse) => {
        res.writeHead(302, { location: 'http://169.254.169.254/' });
        res.end();
      },
      (_req: unknown, res: import('node:http').ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: 'x'.repeat(70 * 1024) }));
      },
    ]) {
      receiver.received.length = 0;
      receiver.respond = respond as typeof receiver.respond;
      model.script({ calls: [{ name: 'order_status', arguments: '{"orderId":"1"}' }] }, { text: 'Sorry.' });
      const res = await chat('Where is order 1?');
      const { conversationId } = (await res.json()) as { conversationId: string };
      const conversation = await api(app.url, 'GET', `/api/v1/conversations/${conversationId}`, owner.secret);
      failures.push(conversation.body.toolCalls[0].error);
      t.equal(receiver.received.length, 1, 'one request, never repeated');
      await setTimeoutMs(10_000);
    }
    t.match(failures, [/^no answer within 1 s$/, /^the tool answered HTTP 302$/, /^the answer is larger than 64 KB$/]);
  });

  t.test('an async tool: the model hears "started" at once; the result completes the item later', async (t) => {
    receiver.received.length = 0;
    let release: () => void = () => undefined;
    receiver.respond = (_req, res) => {
      release = () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ result: { booked: true } }));
      };
    };
    await api(app.url, 'POST', tools, owner.secret, {
      ...orderStatusTool(receiver.url),
      name: 'book_slot',
      mode: 'async',
      timeoutMs: 30_000,
    });
    model.script({ calls: [{ name: 'book_slot', arguments: '{"orderId":"9"}' }] }, { text: 'Booking it.' });
    const res = await chat('Book a slot for order 9');
    const { conversationId } = (await res.json()) as { conversationId: string };
    t.same(JSON.parse(model.requests.at(-1)!.messages.at(-1)!['content']), { status: 'started' });
    const item = async () =>
      (await api(app.url, 'GET', `/api/v1/conversations/${conversationId}`, owner.secret)).body.toolCalls[0];
    t.match(await item(), { status: 'pending', name: 'book_slot' });
    await eventually(() => receiver.received.length === 1, 'the async request');
    release();
    t.match(await eventually(async () => ((await item()).status === 'succeeded' ? item() : undefined), 'the result'), {
      result: { booked: true },
    });
  });
});

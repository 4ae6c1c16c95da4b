import t from 'tap';
import { orderStatusTool, startToolReceiver } from '../tools/helpers.js';
import { ownerWithVoice, startVoiceApp, voiceAssistant } from '../voice/helpers.js';
import { api, runScenarios } from './helpers.js';

/**
 * Tool scenarios on voice: websocket and phone scenarios whose calls go through the voice tool runtime, against the
 * simulator (its `[sim:tool=...]` tag makes its next reply a function call). The scenario's mock answers the call; the
 * owner's receiver (a real HTTP server) must receive nothing.
 */
t.test(
  'voice tool scenarios: the mock answers, toolCalled is judged from the call, nothing reaches the owner',
  async (t) => {
    const app = await startVoiceApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const receiver = await startToolReceiver(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner, {
      instructions: 'Help with orders. [sim:tool=order_status{"orderId":"12345"}]',
    });
    const tool = await api(app.url, 'POST', `/api/v1/assistants/${assistant.publicId}/tools`, owner.secret, {
      ...orderStatusTool(receiver.url),
    });
    t.equal(tool.status, 201, 'the tool is created');

    const mock = { tool: 'order_status', result: { status: 'shipped', eta: '2026-12-01' } };
    const turns = [{ say: 'Where is my order' }];
    const create = async (body: Record<string, unknown>) => {
      const res = await api(app.url, 'POST', `/api/v1/assistants/${assistant.id}/scenarios`, owner.secret, {
        turns,
        toolMocks: [mock],
        ...body,
      });
      t.equal(res.status, 201, res.text);
    };
    await create({
      name: 'order over websocket',
      transport: 'websocket',
      expect: [{ toolCalled: { name: 'order_status', arguments: { orderId: '12345' } } }, { mustSay: '2026-12-01' }],
    });
    await create({
      name: 'wrong order number',
      transport: 'websocket',
      expect: [{ toolCalled: { name: 'order_status', arguments: { orderId: '99999' } } }],
    });
    await create({
      name: 'order over the phone',
      transport: 'phone',
      expect: [{ toolCalled: { name: 'order_status', arguments: { orderId: '12345' } } }],
    });

    const { run, results } = await runScenarios(app.url, owner.secret, assistant.id, { concurrency: 3 }, 90_000);
    t.comment(
      JSON.stringify(results.map((r) => ({ name: r.name, status: r.status, verdicts: r.verdicts, error: r.error }))),
    );
    t.match(run, { status: 'done', figures: { passed: 2, failed: 1, errored: 0 } });
    const [ws, wrong, phone] = results;
    t.match(ws, {
      status: 'passed',
      verdicts: [
        { passed: true, evidence: /called order_status\(\{"orderId":"12345"\}\)/ },
        { passed: true, evidence: /2026-12-01/ },
      ],
    });
    const toolLine = ws.transcript.find((e: { role: string }) => e.role === 'tool');
    t.match(
      toolLine,
      {
        text: 'order_status (mocked)',
        tool: { name: 'order_status', arguments: { orderId: '12345' }, result: mock.result, mocked: true },
      },
      'the transcript shows the mocked call and its result',
    );
    t.match(wrong, {
      status: 'failed',
      verdicts: [{ passed: false, evidence: /tool calls: order_status\(\{"orderId":"12345"\}\) \[mocked\]/ }],
    });
    t.match(phone, { status: 'passed', verdicts: [{ passed: true }] });
    t.match(
      phone.transcript.find((e: { role: string }) => e.role === 'tool'),
      { text: 'order_status (mocked)', tool: { mocked: true } },
    );
    t.equal(receiver.received.length, 0, "the owner's tool URL received nothing");
  },
);

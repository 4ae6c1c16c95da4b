import t from 'tap';
import type { VoiceFunctionCall } from '../../src/providers/voice/index.js';
import { pump, silentFrame, simProvider, startSim, voicedFrame, waitFor } from '../providers/voice/helpers.js';

/**
 * The provider seam with tools, on the wire against the simulator: the session delegates to the Responses backend
 * with the function tools; the backend's calls arrive once each (nested `response.event`s); results go back with
 * `response.item.create` and `response.create`, and the backend then speaks them.
 */
t.test('function tools on the Live protocol: declared, called, answered', async (t) => {
  const sim = await startSim(t, { recordWire: true });
  const calls: VoiceFunctionCall[] = [];
  const done: string[] = [];
  const spoken: string[] = [];
  const session = await simProvider(sim).startSession(
    {
      instructions: 'Help. [sim:tool=order_status{"orderId":"12345"}] [sim:tool=not_declared{}]',
      delegation: { type: 'client' },
      tools: [
        {
          name: 'order_status',
          description: 'Order status.',
          parameters: { type: 'object', properties: { orderId: { type: 'string' } } },
        },
      ],
      backend: { model: 'backend-model', instructions: 'Use the tools.' },
    },
    {
      handlers: {
        onFunctionCall: (call) => void calls.push(call),
        onBackendResponseDone: (id) => void done.push(id),
        onOutputTranscript: (d) => void spoken.push(d.text),
      },
    },
  );
  await pump((p) => session.sendAudio(p), voicedFrame(), 10);
  await pump((p) => session.sendAudio(p), silentFrame(), 5);
  await waitFor(() => done.length === 1, 'the backend response');
  t.match(calls, [{ name: 'order_status', arguments: '{"orderId":"12345"}', responseId: done[0] }]);
  t.equal(calls.length, 1, 'a tool the session did not declare is never called');
  t.equal(spoken.length, 0, 'the reply was the function call, not words');

  session.sendToBackend!({ type: 'function_output', callId: calls[0]!.callId, output: '{"result":"shipped"}' });
  session.sendToBackend!({ type: 'respond' });
  await waitFor(() => spoken.includes('shipped'), 'the backend speaks the result');
  await session.close();

  const record = sim.stats.sessions.get(session.id)!;
  const start = JSON.parse(record.wireIn.find((f) => f.includes('"session.start"'))!);
  t.match(start.session.delegation, {
    type: 'responses',
    responses: {
      model: 'backend-model',
      instructions: 'Use the tools.',
      tools: [{ type: 'function', name: 'order_status' }],
    },
  });
  t.same(record.backendItems, [
    { type: 'function_call_output', call_id: calls[0]!.callId, output: '{"result":"shipped"}' },
  ]);
  const events = record.wireOut.map((f) => JSON.parse(f)).filter((e) => e.type === 'response.event');
  t.same(
    events.map((e) => e.event.type),
    ['response.created', 'response.function_call_arguments.done', 'response.output_item.done', 'response.completed'],
    'the nested Responses stream',
  );
});

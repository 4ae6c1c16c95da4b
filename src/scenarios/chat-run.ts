import { setTimeout as sleep } from 'node:timers/promises';
import type { ScenarioDrivers, Observed } from './drivers.js';
import type { ScenarioFields } from './queries.js';

/**
 * A chat scenario: each `say` is one chat turn of one conversation (source `test`), run through the chat service with
 * the scenario's tool mocks answering instead of the owner's server. Turn latency: from the question to the answer's
 * first text.
 */
export async function runChatScenario(
  drivers: ScenarioDrivers,
  target: { accountId: string; assistantId: string },
  scenario: ScenarioFields,
  signal: AbortSignal,
): Promise<Observed> {
  if (!drivers.chatTurn) throw new Error('Chat is not available on this server.');
  const started = performance.now();
  const at = () => Math.round(performance.now() - started);
  const observed: Observed = {
    conversationId: null,
    transcript: [],
    toolCalls: [],
    turnLatenciesMs: [],
    firstAudioMs: null,
    stopAfterInterruptMs: [],
    endReason: null,
  };
  for (const turn of scenario.turns) {
    signal.throwIfAborted();
    if ('wait' in turn) {
      await sleep(turn.wait, undefined, { signal });
      continue;
    }
    if (!('say' in turn)) continue; // refused at creation for chat; a stored older form is skipped
    observed.transcript.push({ role: 'caller', text: turn.say, atMs: at() });
    const asked = performance.now();
    let firstText: number | undefined;
    const out = await drivers.chatTurn({
      ...target,
      conversationId: observed.conversationId ?? undefined,
      message: turn.say,
      toolMocks: scenario.toolMocks,
      signal,
      onFirstText: () => (firstText ??= performance.now()),
    });
    observed.conversationId = out.conversationId;
    for (const call of out.toolCalls) {
      observed.toolCalls.push(call);
      observed.transcript.push({
        role: 'tool',
        text: `${call.name}${call.mocked ? ' (mocked)' : ''}`,
        atMs: at(),
        tool: call,
      });
    }
    observed.turnLatenciesMs.push((firstText ?? performance.now()) - asked);
    observed.transcript.push({ role: 'assistant', text: out.answer, atMs: at() });
  }
  return observed;
}

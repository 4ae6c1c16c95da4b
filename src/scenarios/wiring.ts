import { randomBytes } from 'node:crypto';
import { analyseEndedChat, analysisOf } from '../analysis/index.js';
import { prepareChat, runChat, type ChatDeps } from '../chat/index.js';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import { findLocalVoiceEngines, synthesizeSpeech, transcribeCallAudio } from '../providers/voice/index.js';
import type { RuntimeTool, ToolRuntime } from '../tools/index.js';
import { recentMessages } from '../conversations/index.js';
import { carrierSignature, TWILIO_TRANSPORT, type TwilioTransport, type VoiceService } from '../voice/index.js';
import type { ScenarioDrivers, ToolCallSeen } from './drivers.js';
import { callEndReason, documentHints } from './queries.js';
import type { ToolMock } from './schemas.js';

/**
 * Tool calls answered by the scenario's mocks (never sent); tools without a mock go to the owner's server. Each call
 * is reported to `seen` (chat turns and the calls a voice scenario mints).
 */
function mockedRuntime(
  runtime: ToolRuntime | undefined,
  mocks: ToolMock[],
  seen: (call: ToolCallSeen) => void,
): ToolRuntime {
  const call = async (tool: RuntimeTool, id: string, args: unknown, context: Parameters<ToolRuntime['call']>[3]) => {
    const mock = mocks.find((m) => m.tool === tool.name);
    if (mock) {
      seen({ name: tool.name, arguments: args, result: mock.result, mocked: true });
      return { status: 'succeeded' as const, result: mock.result, sent: false, durationMs: 0 };
    }
    if (!runtime) return { status: 'failed' as const, error: 'tools are not available', sent: false, durationMs: 0 };
    const outcome = await runtime.call(tool, id, args, context);
    seen({ name: tool.name, arguments: args, result: outcome.result ?? outcome.error, mocked: false });
    return outcome;
  };
  return {
    toolsOf: (assistantId) => (runtime ? runtime.toolsOf(assistantId) : Promise.resolve([])),
    newCallId: () => (runtime ? runtime.newCallId() : `tcall_test${Date.now()}`),
    call,
    callWithRetries: call,
  };
}

/**
 * The drivers over the real services: chat turns through the chat service (as the owner, source `test`), voice
 * calls minted by the voice service (source `test`: outside the plan's voice minutes) and joined on this server's own
 * address, the caller's speech made by the local synthesizer.
 */
export function scenarioDrivers(deps: {
  sql: Sql;
  config: Config;
  log: Logger;
  chat: ChatDeps;
  voice: VoiceService | undefined;
  /** The carrier media-stream transport (phone scenarios). */
  phone: TwilioTransport | undefined;
  /** host:port this server listens on, once it does. */
  selfAddress: () => string | undefined;
}): ScenarioDrivers {
  const engines = findLocalVoiceEngines(deps.config.VOICE_LOCAL_ENGINES_PATH).engines;
  const owner = (accountId: string) =>
    ({ kind: 'session', accountId, userId: 'scenario-run', sessionId: 'scenario-run', isAdmin: false }) as const;
  const request = { headers: {}, ip: '127.0.0.1' };
  return {
    async chatTurn(input) {
      const toolCalls: ToolCallSeen[] = [];
      const chat: ChatDeps = {
        ...deps.chat,
        tools: mockedRuntime(deps.chat.tools, input.toolMocks, (c) => toolCalls.push(c)),
      };
      const prepared = await prepareChat(chat, owner(input.accountId), request, {
        assistantId: input.assistantId,
        message: input.message,
        conversationId: input.conversationId,
        source: 'test',
      });
      const result = await runChat(chat, prepared, { signal: input.signal, onText: () => input.onFirstText() });
      if (result.error && result.answer === '') throw new Error(`The chat provider failed (${result.error.failure}).`);
      return { conversationId: result.conversationId, answer: result.answer, toolCalls };
    },
    ...(deps.voice
      ? {
          async mintVoice(input) {
            const self = deps.selfAddress();
            if (self === undefined) throw new Error('The server is not listening yet.');
            const voice = deps.voice!;
            const minted = await voice.mint(
              // The simulated caller is the owner's own script: it consents to the recording when the assistant records.
              {
                assistantId: input.assistantId,
                capabilities: ['playback_gate'],
                source: 'test',
                recordingConsent: true,
              },
              {
                principal: owner(input.accountId),
                request: { ...request, host: self },
                signal: input.signal,
                log: deps.log,
                tools: mockedRuntime(deps.chat.tools, input.toolMocks, input.onToolCall),
              },
            );
            if (!minted.stream) throw new Error('The voice session has no media stream.');
            const stream = new URL(minted.stream.url);
            let ended: Promise<void> | undefined;
            return {
              sessionId: minted.sessionId,
              conversationId: minted.conversationId,
              mediaUrl: `ws://${self}${stream.pathname}${stream.search}`,
              audio: { format: minted.audio.format, sampleRateHz: minted.audio.sampleRateHz },
              end: () =>
                (ended ??= voice
                  .end(minted.sessionId, { principal: owner(input.accountId), visitorId: null, request })
                  .then(() => undefined)),
            };
          },
        }
      : {}),
    ...(deps.voice && deps.phone
      ? {
          async mintPhone(input) {
            const self = deps.selfAddress();
            if (self === undefined) throw new Error('The server is not listening yet.');
            const voice = deps.voice!;
            const minted = await voice.mint(
              {
                assistantId: input.assistantId,
                capabilities: ['playback_gate'],
                source: 'test',
                recordingConsent: true,
                audio: { format: 'pcmu', sampleRateHz: 8000 },
                callerTransport: TWILIO_TRANSPORT,
              },
              {
                principal: owner(input.accountId),
                request: { ...request, host: self },
                signal: input.signal,
                log: deps.log,
                tools: mockedRuntime(deps.chat.tools, input.toolMocks, input.onToolCall),
              },
            );
            if (!minted.stream) throw new Error('The phone call has no media stream.');
            // The simulated carrier signs the stream's upgrade with a token made for this call alone.
            const authToken = randomBytes(24).toString('base64url');
            deps.phone!.expect(minted.sessionId, minted.stream.url, authToken);
            const stream = new URL(minted.stream.url);
            let ended: Promise<void> | undefined;
            return {
              sessionId: minted.sessionId,
              conversationId: minted.conversationId,
              mediaUrl: `ws://${self}${stream.pathname}${stream.search}`,
              headers: { 'x-twilio-signature': carrierSignature(authToken, minted.stream.url) },
              controlToken: minted.controlToken,
              end: () =>
                (ended ??= voice
                  .end(minted.sessionId, { principal: owner(input.accountId), visitorId: null, request })
                  .then(() => undefined)),
            };
          },
        }
      : {}),
    async callFacts(sessionId, conversationId) {
      const [messages, endReason] = await Promise.all([
        recentMessages(deps.sql, conversationId, 200),
        callEndReason(deps.sql, sessionId),
      ]);
      return { messages, endReason };
    },
    listen: engines
      ? async (assistantId, stretches, audio, signal) =>
          transcribeCallAudio(
            engines,
            await documentHints(deps.sql, assistantId, 200_000),
            stretches,
            audio as Parameters<typeof transcribeCallAudio>[3],
            signal,
          )
      : undefined,
    speak: engines
      ? async (text, audio) =>
          (await synthesizeSpeech(engines.synthesizer, text, audio as Parameters<typeof synthesizeSpeech>[2])).frames
      : undefined,
    async analysisOf(accountId, conversationId) {
      const analysis = await analysisOf(deps.sql, accountId, conversationId);
      return analysis?.completedAt ? (analysis as unknown as Record<string, unknown>) : null;
    },
    requestAnalysis: (accountId, conversationId) => analyseEndedChat(deps.sql, accountId, conversationId),
  };
}

import type {
  ClientEvent,
  FunctionTool,
  ResponseItemCreateEvent,
  ResponsesDelegationConfig,
  InputAudioAppendEvent,
  OutputAudioDeltaEvent,
  SessionStartEvent,
  SessionResource,
} from 'openai/resources/live/live';
import { DEFAULT_AUDIO_FORMAT, providerAudioFormat } from './audio-format.js';
import type { VoiceBackendCommand, VoiceSessionConfig } from './types.js';

/**
 * GPT-Live primary-WebSocket wire format: everything the adapter writes or reads byte-wise lives here, typed
 * against the `openai` package (types only; never a runtime import) so drift shows up in the typecheck.
 */

/**
 * The append frame is built by concatenation around the base64 payload: one string per frame instead of an object
 * plus JSON.stringify (the hot path allocates as little as the protocol allows). The key order matches what JSON.stringify would produce for
 * `{type, audio}`, and base64 never needs JSON escaping, so the result is byte-identical.
 */
export const APPEND_PREFIX = '{"type":"session.input_audio.append","audio":"';
export const APPEND_SUFFIX = '"}';

/** The type literal the prefix hard-codes, checked against the SDK so a rename breaks the build. */
export const APPEND_TYPE: InputAudioAppendEvent['type'] = 'session.input_audio.append';

export function encodeAudioAppend(pcm: Buffer): string {
  return APPEND_PREFIX + pcm.toString('base64') + APPEND_SUFFIX;
}

const APPEND_PREFIX_BYTES = Buffer.from(APPEND_PREFIX, 'latin1');
const APPEND_PREFIX_LENGTH = APPEND_PREFIX_BYTES.length;

/**
 * The same bytes as {@link encodeAudioAppend}, built straight into a Buffer (what the session sends; profiled under
 * native-bench voice load). Handing `ws` a string costs a UTF-8 length scan (Buffer.byteLength), a UTF-8 copy
 * (Buffer.from) and, once masked, a separate header + payload pair written with cork/writev. Handed a Buffer, `ws`
 * masks it straight into one framed buffer and issues a single write. base64 is ASCII, so the latin1 write is a
 * plain copy. A fresh buffer per frame (pooled by Buffer.allocUnsafe): the outgoing queue may keep it.
 */
export function encodeAudioAppendFrame(pcm: Buffer): Buffer {
  const b64 = pcm.toString('base64');
  const end = APPEND_PREFIX_LENGTH + b64.length;
  const frame = Buffer.allocUnsafe(end + 2);
  APPEND_PREFIX_BYTES.copy(frame, 0);
  frame.write(b64, APPEND_PREFIX_LENGTH, 'latin1');
  frame[end] = 0x22; // "
  frame[end + 1] = 0x7d; // }
  return frame;
}

/** Bytes of audio an append frame from {@link encodeAudioAppendFrame} carries (read from its base64's length). */
export function appendFrameAudioBytes(frame: Buffer): number {
  const end = frame.length - 2;
  const b64 = end - APPEND_PREFIX_LENGTH;
  return (b64 / 4) * 3 - (frame[end - 1] === 0x3d ? (frame[end - 2] === 0x3d ? 2 : 1) : 0);
}

/** The output-delta shape the fast path recognises; anything else takes the JSON.parse path. */
const OUTPUT_DELTA_TYPE: OutputAudioDeltaEvent['type'] = 'session.output_audio.delta';
const OUTPUT_PREFIX = Buffer.from(`{"type":"${OUTPUT_DELTA_TYPE}","delta":"`, 'latin1');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;

/**
 * Decode `{"type":"session.output_audio.delta","delta":"<b64>"}` straight from the received bytes: one latin1
 * string of the payload and one decode, no UTF-8 copy of the frame and no parsed object. Returns undefined when
 * the frame has any other shape (other key order, extra fields, escapes), so the caller falls back to JSON.parse.
 */
export function decodeOutputAudioFast(data: Buffer): Buffer | undefined {
  return decodeAudioFast(data, OUTPUT_PREFIX);
}

/** A sideband's reflection of the caller's audio, `{"type":"session.input_audio.append","audio":"<b64>"}`, the same way. */
const INPUT_PREFIX = Buffer.from('{"type":"session.input_audio.append","audio":"', 'latin1');

export function decodeInputAudioFast(data: Buffer): Buffer | undefined {
  return decodeAudioFast(data, INPUT_PREFIX);
}

function decodeAudioFast(data: Buffer, prefix: Buffer): Buffer | undefined {
  const length = data.length;
  const prefixLength = prefix.length;
  if (length < prefixLength + 2) return undefined;
  if (data[length - 1] !== CLOSE_BRACE) return undefined;
  if (data.compare(prefix, 0, prefixLength, 0, prefixLength) !== 0) return undefined;
  // The only quote after the prefix must be the closing one, and JSON escapes (e.g. "\/") rule the fast path out.
  if (data.indexOf(QUOTE, prefixLength) !== length - 2) return undefined;
  if (data.indexOf(BACKSLASH, prefixLength) !== -1) return undefined;
  return Buffer.from(data.toString('latin1', prefixLength, length - 2), 'base64');
}

/**
 * The owner's turn taking (end-of-speech silence, how long the caller must talk over the assistant to cut it off) as
 * one line of the session's frontend instructions: the Live protocol has no turn-detection setting, and its
 * instructions are where it takes "voice, conversation, interruptions". Undefined when neither is set (the
 * provider's own defaults apply). The simulator reads this line back, as a model would follow it.
 */
export function turnTakingInstructions(turnTaking: VoiceSessionConfig['turnTaking']): string | undefined {
  const rules: string[] = [];
  if (turnTaking?.endOfSpeechSilenceMs !== undefined)
    rules.push(
      `the caller's turn ends after ${turnTaking.endOfSpeechSilenceMs} ms of silence: a shorter pause is not the end of the turn, wait before you answer`,
    );
  if (turnTaking?.interruptAfterMs !== undefined)
    rules.push(`stop speaking when the caller has talked over you for ${turnTaking.interruptAfterMs} ms, not sooner`);
  return rules.length === 0 ? undefined : `Turn taking: ${rules.join('; ')}.`;
}

/** The session.start command: the data-channel lock is always set here and nowhere else. */
export function buildSessionStart(config: VoiceSessionConfig, defaultModel: string): SessionStartEvent {
  const session: SessionStartEvent['session'] = {
    model: config.model ?? defaultModel,
    client: { data_channel: { allowed_client_events: [] } },
    audio: { format: providerAudioFormat(config.audio ?? DEFAULT_AUDIO_FORMAT) },
  };
  const turnTaking = turnTakingInstructions(config.turnTaking);
  const instructions =
    turnTaking === undefined ? config.instructions : [config.instructions, turnTaking].filter(Boolean).join('\n\n');
  if (instructions !== undefined) session.instructions = instructions;
  if (config.voice !== undefined) session.audio = { ...session.audio, output: { voice: config.voice } };
  if (config.tools !== undefined && config.tools.length > 0) {
    // Tools live with the Responses backend: the Live model delegates, the backend calls them (docs/tools.md).
    const responses: ResponsesDelegationConfig = {
      model: config.backend?.model ?? defaultModel,
      tools: config.tools.map((t): FunctionTool => ({
        type: 'function',
        name: t.name,
        description: t.description,
        parameters: t.parameters,
      })),
      parallel_tool_calls: true,
    };
    if (config.backend?.instructions !== undefined) responses.instructions = config.backend.instructions;
    session.delegation = { type: 'responses', responses };
  } else if (config.delegation != null) {
    session.delegation =
      config.delegation.acknowledgementDelayMs === undefined
        ? { type: 'client' }
        : { type: 'client', acknowledgement_delay_ms: config.delegation.acknowledgementDelayMs };
  }
  return { type: 'session.start', session };
}

/** A command to the session's Responses backend: a function's result or a message (`response.item.create`), or go on. */
export function buildBackendCommand(command: VoiceBackendCommand): string {
  if (command.type === 'respond') return RESPOND_FRAME;
  const item: ResponseItemCreateEvent['item'] =
    command.type === 'function_output'
      ? { type: 'function_call_output', call_id: command.callId, output: command.output }
      : { type: 'message', role: 'developer', content: command.text };
  return JSON.stringify({ type: 'response.item.create', item } satisfies ResponseItemCreateEvent);
}

const RESPOND_FRAME = JSON.stringify({ type: 'response.create' } satisfies ClientEvent);

type ContentCommand = Extract<
  ClientEvent,
  { type: 'session.instructions.append' | 'session.commentary.append' | 'session.thinking.append' }
>;

export function buildContentAppend(type: ContentCommand['type'], content: string, delegationId: string | null): string {
  const event: ContentCommand = { type, content, delegation_id: delegationId };
  return JSON.stringify(event);
}

/** Pre-serialised constant commands: no per-call allocation. */
export const MUTE_FRAME = JSON.stringify({ type: 'session.input_audio.mute' } satisfies ClientEvent);
export const UNMUTE_FRAME = JSON.stringify({ type: 'session.input_audio.unmute' } satisfies ClientEvent);
export const CLOSE_FRAME = JSON.stringify({ type: 'session.close' } satisfies ClientEvent);

/**
 * True only when the echoed session carries `client.data_channel.allowed_client_events` as an empty array.
 * Omission means "allow all" and 'all' means all, so both are unconfirmed.
 */
export function isLockConfirmed(session: SessionResource | undefined): boolean {
  const allowed = session?.client?.data_channel?.allowed_client_events;
  return Array.isArray(allowed) && allowed.length === 0;
}

/** A parsed server frame: any JSON object with a string `type`. Fields are checked where they are used. */
export interface WireEvent {
  type: string;
  event_id?: unknown;
  [key: string]: unknown;
}

/** Parse a text frame; undefined for anything that is not a JSON object with a string type (counted as garbage). */
export function parseServerFrame(data: Buffer): WireEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  if (typeof (value as { type?: unknown }).type !== 'string') return undefined;
  return value as WireEvent;
}

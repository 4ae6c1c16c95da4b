import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { CallAudio, Observed, ScenarioDrivers, ToolCallSeen } from './drivers.js';
import type { ScenarioFields } from './queries.js';

const FRAME_MS = 20;
/** Silence after each utterance: the recognizer's end of speech needs it (600 ms on the local voice). */
const TRAILING_SILENCE_MS = 900;
/** An answer is over once no audio came for this long. */
const QUIET_MS = 900;
/** Frames closer than this belong to one stretch of speech (stop-after-interrupt). */
const CONTIGUOUS_MS = 300;
const ANSWER_START_TIMEOUT_MS = 30_000;
const ANSWER_END_TIMEOUT_MS = 60_000;

export function silenceFrames(ms: number, audio: CallAudio): Buffer[] {
  const size = (audio.sampleRateHz / 50) * (audio.format === 'pcm16' ? 2 : 1);
  const byte = audio.format === 'pcmu' ? 0xff : audio.format === 'pcma' ? 0xd5 : 0;
  return Array.from({ length: Math.ceil(ms / FRAME_MS) }, () => Buffer.alloc(size, byte));
}

/**
 * A websocket scenario: a simulated caller on a real call (source `test`) over the server's own media WebSocket. Each
 * `say` is spoken with the local synthesizer at real-time pace; what the assistant says is its own transcript of its
 * speech, what it heard of the caller is kept beside each caller line, and the times are as the caller heard them:
 * turn latency from the end of the caller's speech to the first answer audio, the stop after an interrupt from the
 * first interrupting frame to the last frame of the answer it talked over.
 */
export async function runVoiceScenario(
  drivers: ScenarioDrivers,
  target: { accountId: string; assistantId: string },
  scenario: ScenarioFields,
  signal: AbortSignal,
): Promise<Observed> {
  if (!drivers.mintVoice) throw new Error('Voice is not available on this server.');
  if (!drivers.speak) throw new Error('The local speech synthesizer (espeak-ng) is not installed on this server.');
  const speak = drivers.speak;
  let started = performance.now();
  const at = () => Math.round(performance.now() - started);
  const toolMocks = scenario.toolMocks;
  const call = await drivers.mintVoice({
    ...target,
    signal,
    toolMocks,
    onToolCall: (c) => toolCallSeen(observed, c, at()),
  });
  started = performance.now();
  const observed: Observed = {
    conversationId: call.conversationId,
    transcript: [],
    toolCalls: [],
    turnLatenciesMs: [],
    firstAudioMs: null,
    stopAfterInterruptMs: [],
    endReason: null,
  };
  const audioAt: number[] = [];
  const answers: Buffer[][] = [];
  let answer: Buffer[] | undefined;
  let ended: { endReason: string | null } | undefined;
  const ws = new WebSocket(call.mediaUrl, { perMessageDeflate: false });
  ws.binaryType = 'nodebuffer';
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      audioAt.push(performance.now());
      // Each answer's audio, for the caller's recognizer: a new stretch begins after each caller utterance.
      if (answer === undefined) answers.push((answer = []));
      answer.push(data);
      return;
    }
    let event: { type?: string; role?: string; text?: string; endReason?: string | null };
    try {
      event = JSON.parse(data.toString('utf8')) as typeof event;
    } catch {
      return;
    }
    if (event.type === 'ended') ended = { endReason: event.endReason ?? null };
    if (event.type !== 'transcript' || typeof event.text !== 'string') return;
    const last = observed.transcript.at(-1);
    if (event.role === 'assistant') {
      if (last?.role === 'assistant') last.text = `${last.text} ${event.text}`.trim();
      else observed.transcript.push({ role: 'assistant', text: event.text.trim(), atMs: at() });
    } else if (event.role === 'user') {
      const caller = observed.transcript.findLast((e) => e.role === 'caller');
      if (caller) caller.heard = `${caller.heard ?? ''} ${event.text}`.trim();
    }
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`media socket refused: ${res.statusCode}`)));
    });

    /** Sends frames at playout pace (drift-free). */
    const play = async (frames: Buffer[]) => {
      const t0 = performance.now();
      for (let i = 0; i < frames.length; i++) {
        signal.throwIfAborted();
        const due = t0 + i * FRAME_MS - performance.now();
        if (due > 1) await sleep(due);
        if (ws.readyState !== WebSocket.OPEN) throw new Error('The call ended before the scenario did.');
        ws.send(frames[i]!, { binary: true });
      }
    };
    const firstAudioAfter = (t: number) => audioAt.find((a) => a > t);
    const waitFor = async (done: () => boolean, timeoutMs: number) => {
      const until = performance.now() + timeoutMs;
      while (!done() && performance.now() < until && ended === undefined) await sleep(50, undefined, { signal });
      return done();
    };
    /** After speech that ended at `endSpeech`: the answer's first audio (its latency recorded), or undefined. */
    const awaitAnswer = async (endSpeech: number): Promise<number | undefined> => {
      const trailing = play(silenceFrames(TRAILING_SILENCE_MS, call.audio));
      await waitFor(() => firstAudioAfter(endSpeech) !== undefined, ANSWER_START_TIMEOUT_MS);
      await trailing;
      const first = firstAudioAfter(endSpeech);
      if (first === undefined) return undefined;
      observed.turnLatenciesMs.push(first - endSpeech);
      observed.firstAudioMs ??= first - endSpeech;
      return first;
    };
    const awaitQuiet = () => waitFor(() => performance.now() - (audioAt.at(-1) ?? 0) > QUIET_MS, ANSWER_END_TIMEOUT_MS);

    let answerStart: number | undefined;
    for (let i = 0; i < scenario.turns.length; i++) {
      const turn = scenario.turns[i]!;
      const nextIsInterrupt = scenario.turns[i + 1] !== undefined && 'interrupt' in scenario.turns[i + 1]!;
      if ('wait' in turn) {
        await play(silenceFrames(turn.wait, call.audio));
      } else if ('say' in turn) {
        const frames = await speak(turn.say, call.audio);
        observed.transcript.push({ role: 'caller', text: turn.say, atMs: at() });
        await play([...silenceFrames(200, call.audio), ...frames]);
        answer = undefined;
        answerStart = await awaitAnswer(performance.now());
        if (!nextIsInterrupt) await awaitQuiet();
      } else if ('interrupt' in turn) {
        const frames = await speak(turn.interrupt, call.audio);
        if (answerStart !== undefined) {
          const due = answerStart + turn.afterMs - performance.now();
          if (due > 0) await play(silenceFrames(due, call.audio));
        }
        const t = performance.now();
        observed.transcript.push({ role: 'caller', text: turn.interrupt, atMs: at() });
        await play(frames);
        answer = undefined;
        // The answer talked over: its frames that kept coming without a gap after the caller began.
        let last = t;
        for (const a of audioAt) if (a > t && a - last < CONTIGUOUS_MS) last = a;
        if (answerStart !== undefined) observed.stopAfterInterruptMs.push(last - t);
        answerStart = await awaitAnswer(performance.now());
        if (!nextIsInterrupt) await awaitQuiet();
      }
    }
  } finally {
    await call.end().catch(() => undefined);
    const until = performance.now() + 5000;
    while (ended === undefined && ws.readyState === WebSocket.OPEN && performance.now() < until) await sleep(50);
    ws.close();
    await Promise.race([closed, sleep(2000)]);
  }
  // null: the caller (this scenario) hung up.
  observed.endReason = ended?.endReason ?? 'client';
  await listenBack(drivers, target.assistantId, answers, call.audio, observed, signal);
  return observed;
}

/** A tool call of the scenario's call: judged by `toolCalled`, shown in the transcript (mocked or not). */
export function toolCallSeen(observed: Observed, call: ToolCallSeen, atMs: number): void {
  observed.toolCalls.push(call);
  observed.transcript.push({ role: 'tool', text: `${call.name}${call.mocked ? ' (mocked)' : ''}`, atMs, tool: call });
}

/**
 * What the caller's own recognizer heard of each answer (its audio as received, in the call's format), kept beside the
 * assistant's lines (in order). Websocket and phone scenarios both listen back with it.
 */
export async function listenBack(
  drivers: ScenarioDrivers,
  assistantId: string,
  answers: Buffer[][],
  audio: CallAudio,
  observed: Observed,
  signal: AbortSignal,
): Promise<void> {
  if (!drivers.listen || answers.length === 0) return;
  let heard: string[];
  try {
    heard = await drivers.listen(
      assistantId,
      answers.map((frames) => Buffer.concat(frames)),
      audio,
      signal,
    );
  } catch {
    return; // evidence only: the verdicts stand on the assistant's own transcript
  }
  const lines = observed.transcript.filter((e) => e.role === 'assistant');
  lines.forEach((line, i) => {
    if (heard[i] !== undefined) line.heard = heard[i];
  });
}

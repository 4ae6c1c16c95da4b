import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { CallAudio, Observed, ScenarioDrivers, ToolCallSeen } from './drivers.js';
import type { ScenarioFields } from './queries.js';
import type { TranscriptEntry } from './schemas.js';
import { listenBack, silenceFrames, toolCallSeen } from './voice-run.js';

const FRAME_MS = 20;
const TRAILING_SILENCE_MS = 900;
const QUIET_MS = 900;
const CONTIGUOUS_MS = 300;
const ANSWER_START_TIMEOUT_MS = 30_000;
const ANSWER_END_TIMEOUT_MS = 60_000;
/** How long the stored conversation is waited for to hold a line per answer heard (turns are stored as they drain). */
const STORED_TIMEOUT_MS = 5000;
const PHONE_AUDIO: CallAudio = { format: 'pcmu', sampleRateHz: 8000 };

/**
 * A phone scenario: the simulated carrier's side of a call (μ-law 8 kHz media stream, signed upgrade, keypad presses
 * as `dtmf` events), on the server's own phone-stream socket. The carrier protocol carries no transcripts, so what
 * the assistant said and heard is read from the call's stored conversation once it ended; the caller also listens
 * back, recognizing each answer's μ-law audio as the media stream brought it (kept beside the assistant's lines).
 */
export async function runPhoneScenario(
  drivers: ScenarioDrivers,
  target: { accountId: string; assistantId: string },
  scenario: ScenarioFields,
  signal: AbortSignal,
): Promise<Observed> {
  if (!drivers.mintPhone || !drivers.callFacts) throw new Error('Phone calls are not available on this server.');
  if (!drivers.speak) throw new Error('The local speech synthesizer (espeak-ng) is not installed on this server.');
  const speak = drivers.speak;
  let started = performance.now();
  const at = () => Math.round(performance.now() - started);
  const tools: Array<{ call: ToolCallSeen; atMs: number }> = [];
  const toolMocks = scenario.toolMocks;
  const call = await drivers.mintPhone({
    ...target,
    signal,
    toolMocks,
    onToolCall: (c) => tools.push({ call: c, atMs: at() }),
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
  const callerLines: Array<TranscriptEntry & { answerAtMs?: number }> = [];
  const audioAt: number[] = [];
  const answers: Buffer[][] = [];
  let answer: Buffer[] | undefined;
  const streamSid = `MZ${call.sessionId.replace(/[^A-Za-z0-9]/g, '').slice(-30)}`;
  const ws = new WebSocket(call.mediaUrl, { perMessageDeflate: false, headers: call.headers });
  let hungUp = false;
  ws.on('message', (data: Buffer) => {
    let event: { event?: string; mark?: { name?: string }; media?: { payload?: string } };
    try {
      event = JSON.parse(data.toString('utf8')) as typeof event;
    } catch {
      return;
    }
    if (event.event === 'media') {
      audioAt.push(performance.now());
      // Each answer's audio, for the caller's recognizer: a new stretch begins after each caller utterance.
      if (answer === undefined) answers.push((answer = []));
      answer.push(Buffer.from(event.media?.payload ?? '', 'base64'));
    }
    // A carrier echoes each mark once the audio before it has played; this one plays nothing, so at once.
    else if (event.event === 'mark' && ws.readyState === WebSocket.OPEN)
      ws.send(JSON.stringify({ event: 'mark', streamSid, mark: { name: event.mark?.name ?? '' } }));
  });
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  const send = (message: Record<string, unknown>) => {
    if (ws.readyState !== WebSocket.OPEN) throw new Error('The call ended before the scenario did.');
    ws.send(JSON.stringify(message));
  };
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`phone stream refused: ${res.statusCode}`)));
    });
    send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    send({
      event: 'start',
      streamSid,
      start: {
        streamSid,
        callSid: `CA${streamSid.slice(2)}`,
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
        customParameters: { token: call.controlToken },
      },
    });
    const play = async (frames: Buffer[]) => {
      const t0 = performance.now();
      for (let i = 0; i < frames.length; i++) {
        signal.throwIfAborted();
        const due = t0 + i * FRAME_MS - performance.now();
        if (due > 1) await sleep(due);
        send({ event: 'media', streamSid, media: { payload: frames[i]!.toString('base64') } });
      }
    };
    const firstAudioAfter = (t: number) => audioAt.find((a) => a > t);
    const waitFor = async (done: () => boolean, timeoutMs: number) => {
      const until = performance.now() + timeoutMs;
      while (!done() && performance.now() < until && ws.readyState === WebSocket.OPEN)
        await sleep(50, undefined, { signal });
    };
    const awaitAnswer = async (endSpeech: number, line: { answerAtMs?: number }) => {
      const trailing = play(silenceFrames(TRAILING_SILENCE_MS, PHONE_AUDIO));
      await waitFor(() => firstAudioAfter(endSpeech) !== undefined, ANSWER_START_TIMEOUT_MS);
      await trailing;
      const first = firstAudioAfter(endSpeech);
      if (first === undefined) return undefined;
      observed.turnLatenciesMs.push(first - endSpeech);
      observed.firstAudioMs ??= first - endSpeech;
      line.answerAtMs = Math.round(first - started);
      return first;
    };
    const awaitQuiet = () => waitFor(() => performance.now() - (audioAt.at(-1) ?? 0) > QUIET_MS, ANSWER_END_TIMEOUT_MS);

    let answerStart: number | undefined;
    for (let i = 0; i < scenario.turns.length; i++) {
      const turn = scenario.turns[i]!;
      const nextIsInterrupt = scenario.turns[i + 1] !== undefined && 'interrupt' in scenario.turns[i + 1]!;
      if ('wait' in turn) await play(silenceFrames(turn.wait, PHONE_AUDIO));
      else if ('press' in turn) {
        for (const digit of turn.press) {
          send({ event: 'dtmf', streamSid, dtmf: { track: 'inbound_track', digit } });
          await play(silenceFrames(100, PHONE_AUDIO));
        }
        callerLines.push({ role: 'caller', text: `(pressed ${turn.press})`, atMs: at() });
      } else {
        const text = 'say' in turn ? turn.say : turn.interrupt;
        const frames = await speak(text, PHONE_AUDIO);
        if ('interrupt' in turn && answerStart !== undefined) {
          const due = answerStart + turn.afterMs - performance.now();
          if (due > 0) await play(silenceFrames(due, PHONE_AUDIO));
        }
        const line: TranscriptEntry & { answerAtMs?: number } = { role: 'caller', text, atMs: at() };
        callerLines.push(line);
        const t = performance.now();
        await play('say' in turn ? [...silenceFrames(200, PHONE_AUDIO), ...frames] : frames);
        answer = undefined;
        if ('interrupt' in turn && answerStart !== undefined) {
          let last = t;
          for (const a of audioAt) if (a > t && a - last < CONTIGUOUS_MS) last = a;
          observed.stopAfterInterruptMs.push(last - t);
        }
        answerStart = await awaitAnswer(performance.now(), line);
        if (!nextIsInterrupt) await awaitQuiet();
      }
    }
    if (ws.readyState === WebSocket.OPEN) {
      send({ event: 'stop', streamSid });
      hungUp = true;
    }
  } finally {
    if (!hungUp) await call.end().catch(() => undefined);
    ws.close();
    await Promise.race([closed, sleep(2000)]);
  }
  // What was said and heard, from the stored conversation (in order), beside the scripted caller lines.
  let facts = await drivers.callFacts(call.sessionId, call.conversationId);
  const storedBy = performance.now() + STORED_TIMEOUT_MS;
  const storedAnswers = () => facts.messages.filter((m) => m.role === 'assistant').length;
  while (storedAnswers() < answers.length && performance.now() < storedBy) {
    await sleep(100, undefined, { signal });
    facts = await drivers.callFacts(call.sessionId, call.conversationId);
  }
  let next = 0;
  for (const message of facts.messages) {
    if (message.role === 'user') {
      const line = callerLines[next++];
      if (line) observed.transcript.push({ ...withoutAnswerAt(line), heard: message.content });
      else observed.transcript.push({ role: 'caller', text: '', heard: message.content, atMs: at() });
    } else {
      const atMs = callerLines[Math.max(0, next - 1)]?.answerAtMs ?? at();
      observed.transcript.push({ role: 'assistant', text: message.content, atMs });
    }
  }
  for (const line of callerLines.slice(next)) observed.transcript.push(withoutAnswerAt(line));
  for (const tool of tools) toolCallSeen(observed, tool.call, tool.atMs);
  observed.transcript.sort((a, b) => a.atMs - b.atMs); // the tool calls among the lines (a stable sort)
  observed.endReason = hungUp ? 'client' : (facts.endReason ?? 'unknown');
  await listenBack(drivers, target.assistantId, answers, PHONE_AUDIO, observed, signal);
  return observed;
}

function withoutAnswerAt(line: TranscriptEntry & { answerAtMs?: number }): TranscriptEntry {
  const { answerAtMs: _, ...entry } = line;
  return entry;
}

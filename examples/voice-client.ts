/**
 * An example Parley voice client over the SDK's VoiceCall: mint a session with an API key, stream a WAV file as
 * 20 ms frames in real time, follow the playback gate, send heartbeats, write the assistant audio it was allowed to
 * hear to a WAV, end the session.
 *
 *   npx tsx examples/voice-client.ts --base-url http://127.0.0.1:3000 --api-key sk_live_... --assistant asst_... \
 *     --in question.wav --out answer.wav [--tail-ms 4000] [--recording-consent]
 *
 * --recording-consent sends `recordingConsent: true` (the field the server asks for when the assistant records
 * calls; --record is the same flag under its older name).
 *
 * The input is a WAV (PCM16 or G.711 at any rate, converted to the media format of parley.voice.v1: PCM16 mono
 * 24 kHz); without --in it speaks synthetic speech. Prints one JSON summary on stdout and the call's events on stderr. The protocol itself (mint, media socket,
 * gate stream, heartbeats, end) lives in sdk/src/voice/call.ts.
 */
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import {
  FRAME_BYTES,
  FRAME_MS,
  pcmFromWav,
  syntheticSpeech,
  VoiceCall,
  wavHeader,
  type EndReason,
} from '../sdk/src/index.js';

export interface VoiceCallOptions {
  baseUrl: string;
  apiKey: string;
  assistantId: string;
  /** PCM16 mono 24 kHz, without header (use readPcmWav for a file). */
  input: Uint8Array;
  /** Where to write what the assistant said (a WAV); omitted: not written. */
  outputPath?: string;
  /** After the input ends, wait this long for the reply before ending. Default 4000. */
  tailMs?: number;
  recordingConsent?: boolean;
  /** Called for every event of the call (state, transcript, gate, heartbeat, notice, ended). */
  onEvent?: (event: Record<string, unknown>) => void;
  signal?: AbortSignal;
}

export interface VoiceCallSummary {
  sessionId: string;
  conversationId: string;
  framesSent: number;
  assistantBytesHeard: number;
  /** Assistant audio that arrived while the gate was closed (the server withholds it; so should every client). */
  assistantBytesMuted: number;
  transcripts: Array<{ role: string; text: string }>;
  gateDecisions: number;
  heartbeats: number;
  heartbeatFailures: number;
  /** Largest lateness of the 20 ms send schedule (ms): a generator that falls behind measures itself, not Parley. */
  maxLagMs: number;
  endReason: EndReason | undefined;
  billableSeconds: number | null;
}

/** A WAV's samples as PCM16 mono 24 kHz; a file that is not PCM16 or G.711 is refused with a message that says what it was. */
export async function readPcmWav(path: string): Promise<Buffer> {
  const pcm = pcmFromWav(await readFile(path), path);
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

/** A WAV written as it arrives; the sizes in the header are patched on close. */
class WavWriter {
  private bytes = 0;
  private position = 44;
  private chain = Promise.resolve();
  private constructor(private readonly file: FileHandle) {}
  static async create(path: string): Promise<WavWriter> {
    const file = await open(path, 'w');
    await file.write(Buffer.alloc(44), 0, 44, 0);
    return new WavWriter(file);
  }
  /** Writes are chained, in order (the socket delivers faster than we await). */
  write(pcm: Uint8Array): void {
    const at = this.position;
    const copy = Buffer.from(pcm);
    this.position += copy.length;
    this.bytes += copy.length;
    this.chain = this.chain.then(() => this.file.write(copy, 0, copy.length, at).then(() => undefined));
  }
  async close(): Promise<void> {
    await this.chain;
    await this.file.write(wavHeader(this.bytes), 0, 44, 0);
    await this.file.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** One whole call. Resolves with what happened; the session is always ended on the way out. */
export async function runVoiceCall(options: VoiceCallOptions): Promise<VoiceCallSummary> {
  const call = new VoiceCall({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    assistantId: options.assistantId,
    WebSocket,
    ...(options.recordingConsent ? { recordingConsent: true } : {}),
  });
  const transcripts: VoiceCallSummary['transcripts'] = [];
  const output = options.outputPath ? await WavWriter.create(options.outputPath) : undefined;
  call.on('audio', (pcm) => output?.write(pcm));
  call.on('transcript', (x) => {
    transcripts.push({ role: x.role, text: x.text });
    options.onEvent?.({ type: 'transcript', ...x });
  });
  call.on('state', (s) => options.onEvent?.({ type: 'state', ...s }));
  call.on('gate', (g) => options.onEvent?.({ ...g }));
  call.on('heartbeat', (h) => options.onEvent?.({ type: 'heartbeat', ...h }));
  call.on('notice', (n) => options.onEvent?.({ type: 'notice', ...n }));
  call.on('ended', (e) => options.onEvent?.({ type: 'ended', ...e }));
  const abort = () => void call.end();
  options.signal?.addEventListener('abort', abort, { once: true });

  let maxLagMs = 0;
  let framesSent = 0;
  let answer: Awaited<ReturnType<VoiceCall['end']>>;
  try {
    await call.start();
    const live = () => call.state !== 'ended' && call.state !== 'error';
    // 20 ms frames on a drift-free schedule (each frame is due at start + n x 20 ms, however late the last one was).
    const started = performance.now();
    for (let offset = 0, n = 0; offset + FRAME_BYTES <= options.input.length && live(); offset += FRAME_BYTES, n++) {
      const lag = performance.now() - (started + n * FRAME_MS);
      if (lag < 0) await sleep(-lag);
      else maxLagMs = Math.max(maxLagMs, lag);
      if (call.sendAudio(options.input.subarray(offset, offset + FRAME_BYTES))) framesSent++;
    }
    // Silence while the assistant answers (a caller's microphone keeps sending), then hang up.
    const silence = new Uint8Array(FRAME_BYTES);
    const tailEnd = performance.now() + (options.tailMs ?? 4000);
    while (performance.now() < tailEnd && live()) {
      await sleep(FRAME_MS);
      call.sendAudio(silence);
    }
  } finally {
    answer = await call.end();
    options.signal?.removeEventListener('abort', abort);
    await output?.close();
  }
  return {
    sessionId: call.session?.sessionId ?? '',
    conversationId: call.session?.conversationId ?? '',
    /** Frames of the input sent (the silence after it is not counted). */
    framesSent,
    assistantBytesHeard: call.stats.assistantBytes,
    assistantBytesMuted: call.stats.assistantBytesMuted,
    transcripts,
    gateDecisions: call.stats.gateDecisions,
    heartbeats: call.stats.heartbeats,
    heartbeatFailures: call.stats.heartbeatFailures,
    maxLagMs,
    endReason: call.endReason,
    billableSeconds: answer?.billableSeconds ?? null,
  };
}

function argument(args: string[], name: string, fallback?: string): string {
  const i = args.indexOf(`--${name}`);
  const value = i >= 0 ? args[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const inputPath = args.includes('--in') ? argument(args, 'in') : undefined;
  const summary = await runVoiceCall({
    baseUrl: argument(args, 'base-url', 'http://127.0.0.1:3000'),
    apiKey: argument(args, 'api-key', process.env['PARLEY_API_KEY']),
    assistantId: argument(args, 'assistant'),
    input: inputPath !== undefined ? await readPcmWav(inputPath) : syntheticSpeech({ utterances: 1 }),
    outputPath: argument(args, 'out', 'assistant.wav'),
    tailMs: Number(argument(args, 'tail-ms', '4000')),
    recordingConsent: args.includes('--recording-consent') || args.includes('--record'),
    onEvent: (e) => process.stderr.write(`${JSON.stringify(e)}\n`),
  }).catch((err: unknown) => {
    // The server names the body field; this is the flag that sends it.
    if ((err as { code?: unknown }).code === 'VOICE_CONSENT_REQUIRED')
      throw new Error(`${(err as Error).message}\nThis assistant records calls: run again with --recording-consent.`);
    throw err;
  });
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}

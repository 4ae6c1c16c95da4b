/**
 * An example Parley voice client (and the load generator's unit of work): mint a session with an API key, stream a
 * WAV file as 20 ms frames in real time over the media WebSocket, follow the playback gate, send heartbeats, write
 * the assistant audio it was allowed to hear to a WAV, end the session.
 *
 *   npx tsx examples/voice-client.ts --base-url http://127.0.0.1:3000 --api-key sk_live_... --assistant asst_... \
 *     --in question.wav --out answer.wav [--tail-ms 4000] [--record]
 *
 * The input must be PCM16 mono 24 kHz WAV (the media format of parley.voice.v1). Prints one JSON summary on stdout.
 *
 * Protocol (API-DECISIONS, Voice; src/voice/README.md): binary frames both ways are raw PCM16LE 24 kHz mono; the
 * client may send only `{"type":"mute"}` / `{"type":"unmute"}` as text; the server sends `state`, `transcript` and
 * `ended` JSON events. The gate stream (POST .../gate, NDJSON) says when assistant audio may be played.
 */
import { once } from 'node:events';
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';

export interface VoiceCallOptions {
  baseUrl: string;
  apiKey: string;
  assistantId: string;
  /** PCM16 mono 24 kHz, without header (use readPcmWav for a file). */
  input: Buffer;
  /** Where to write what the assistant said (a WAV); omitted: not written. */
  outputPath?: string;
  /** After the input ends, wait this long for the reply before ending. Default 4000. */
  tailMs?: number;
  recordingConsent?: boolean;
  /** Called for every event the server sends (transcripts, state). */
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
  endReason: string | null;
  billableSeconds: number | null;
}

const FRAME_BYTES = 960; // 20 ms of PCM16 mono at 24 kHz
const FRAME_MS = 20;

/** The sample data of a PCM16 mono 24 kHz WAV; anything else is refused with a message that says what it was. */
export async function readPcmWav(path: string): Promise<Buffer> {
  const file = await readFile(path);
  if (file.toString('ascii', 0, 4) !== 'RIFF' || file.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${path} is not a WAV file`);
  let offset = 12;
  let format: { channels: number; rate: number; bits: number; tag: number } | undefined;
  while (offset + 8 <= file.length) {
    const id = file.toString('ascii', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') format = { tag: file.readUInt16LE(body), channels: file.readUInt16LE(body + 2), rate: file.readUInt32LE(body + 4), bits: file.readUInt16LE(body + 14) };
    if (id === 'data') {
      if (format === undefined || format.tag !== 1 || format.channels !== 1 || format.rate !== 24_000 || format.bits !== 16) {
        throw new Error(`${path} must be PCM16 mono 24 kHz (got ${JSON.stringify(format)}); e.g. ffmpeg -i in.wav -ac 1 -ar 24000 -c:a pcm_s16le out.wav`);
      }
      return file.subarray(body, Math.min(file.length, body + size) & ~1);
    }
    offset = body + size + (size & 1);
  }
  throw new Error(`${path} has no data chunk`);
}

/** A WAV written as it arrives; the sizes in the header are patched on close. */
class WavWriter {
  private bytes = 0;
  private position = 44;
  private constructor(private readonly file: FileHandle) {}
  static async create(path: string): Promise<WavWriter> {
    const file = await open(path, 'w');
    await file.write(Buffer.alloc(44), 0, 44, 0);
    return new WavWriter(file);
  }
  /** Writes are chained, in order (the socket delivers faster than we await). */
  private chain = Promise.resolve();
  write(pcm: Buffer): void {
    const at = this.position;
    this.position += pcm.length;
    this.bytes += pcm.length;
    this.chain = this.chain.then(() => this.file.write(pcm, 0, pcm.length, at).then(() => undefined));
  }
  async close(): Promise<void> {
    await this.chain;
    const h = Buffer.alloc(44);
    h.write('RIFF', 0, 'ascii');
    h.writeUInt32LE(36 + this.bytes, 4);
    h.write('WAVEfmt ', 8, 'ascii');
    h.writeUInt32LE(16, 16);
    h.writeUInt16LE(1, 20);
    h.writeUInt16LE(1, 22);
    h.writeUInt32LE(24_000, 24);
    h.writeUInt32LE(48_000, 28);
    h.writeUInt16LE(2, 32);
    h.writeUInt16LE(16, 34);
    h.write('data', 36, 'ascii');
    h.writeUInt32LE(this.bytes, 40);
    await this.file.write(h, 0, 44, 0);
    await this.file.close();
  }
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** One whole call. Resolves with what happened; the session is always ended on the way out. */
export async function runVoiceCall(options: VoiceCallOptions): Promise<VoiceCallSummary> {
  const base = options.baseUrl.replace(/\/$/, '');
  const auth = { authorization: `Bearer ${options.apiKey}` };
  const minted = await postJson(`${base}/api/v1/voice/sessions`, {
    assistantId: options.assistantId,
    capabilities: ['heartbeat', 'playback_gate'],
    ...(options.recordingConsent ? { recordingConsent: true } : {}),
  }, auth, options.signal);
  if (minted.status !== 200) throw new Error(`mint answered ${minted.status}: ${JSON.stringify(minted.body)}`);
  const session = minted.body as { sessionId: string; conversationId: string; controlToken: string; heartbeatIntervalMs?: number; stream: { url: string } };
  const sessionUrl = (suffix: string) => `${base}/api/v1/voice/sessions/${session.sessionId}/${suffix}`;
  const summary: VoiceCallSummary = {
    sessionId: session.sessionId, conversationId: session.conversationId, framesSent: 0, assistantBytesHeard: 0, assistantBytesMuted: 0,
    transcripts: [], gateDecisions: 0, heartbeats: 0, heartbeatFailures: 0, maxLagMs: 0, endReason: null, billableSeconds: null,
  };
  const output = options.outputPath ? await WavWriter.create(options.outputPath) : undefined;
  const stop = new AbortController();
  // The gate is followed on both channels: the NDJSON stream (the contract) and the media socket's `state` events
  // (ordered with the audio). Whichever decision has the higher seq wins.
  let gateOpen = false;
  let gateSeq = -1;
  const decide = (seq: number, open: boolean) => {
    if (seq < gateSeq) return;
    gateSeq = seq;
    gateOpen = open;
  };
  let ws: WebSocket | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let ended = false;

  try {
    // The gate: assistant audio is played only while the latest decision is open.
    const gate = (async () => {
      const res = await fetch(sessionUrl('gate'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: session.controlToken }), signal: stop.signal });
      if (res.body === null) return;
      const decoder = new TextDecoder();
      let pending = '';
      for await (const chunk of res.body) {
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
          const line = JSON.parse(pending.slice(0, nl)) as { type: string; seq?: number; state?: string; endReason?: string | null };
          pending = pending.slice(nl + 1);
          if (line.type === 'gate') {
            summary.gateDecisions++;
            decide(line.seq ?? 0, line.state === 'open');
          } else if (line.type === 'end') {
            decide(Number.MAX_SAFE_INTEGER, false);
            ended = true;
          }
        }
      }
    })().catch(() => undefined);

    // Heartbeats at the interval the mint gave (the session ends heartbeat_lost after 45 s without one).
    heartbeatTimer = setInterval(() => {
      postJson(sessionUrl('heartbeat'), { token: session.controlToken }).then(
        (r) => (r.status === 200 ? summary.heartbeats++ : summary.heartbeatFailures++),
        () => summary.heartbeatFailures++,
      );
    }, session.heartbeatIntervalMs ?? 5000);

    // The media socket: stream.url already carries the token.
    const url = new URL(session.stream.url, base);
    url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
    ws = new WebSocket(url, { perMessageDeflate: false });
    ws.binaryType = 'nodebuffer';
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        if (!gateOpen) {
          summary.assistantBytesMuted += data.length;
          return;
        }
        summary.assistantBytesHeard += data.length;
        output?.write(data);
        return;
      }
      const event = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      options.onEvent?.(event);
      if (event['type'] === 'state' && typeof event['gateSeq'] === 'number') decide(event['gateSeq'], event['gate'] === 'open');
      if (event['type'] === 'transcript') summary.transcripts.push({ role: String(event['role']), text: String(event['text']) });
      if (event['type'] === 'ended') {
        ended = true;
        summary.endReason = (event['endReason'] as string | null) ?? null;
      }
    });
    await once(ws, 'open');

    // 20 ms frames on a drift-free schedule (each frame is due at start + n x 20 ms, however late the last one was).
    const started = performance.now();
    for (let offset = 0, n = 0; offset + FRAME_BYTES <= options.input.length && !ended && ws.readyState === ws.OPEN; offset += FRAME_BYTES, n++) {
      const due = started + n * FRAME_MS;
      const lag = performance.now() - due;
      if (lag < 0) await sleep(-lag);
      else summary.maxLagMs = Math.max(summary.maxLagMs, lag);
      ws.send(options.input.subarray(offset, offset + FRAME_BYTES), { binary: true });
      summary.framesSent++;
    }
    // Silence while the assistant answers (a caller's microphone keeps sending), then hang up.
    const silence = Buffer.alloc(FRAME_BYTES);
    const tailEnd = performance.now() + (options.tailMs ?? 4000);
    for (let n = 0; performance.now() < tailEnd && !ended && ws.readyState === ws.OPEN; n++) {
      await sleep(FRAME_MS);
      ws.send(silence, { binary: true });
    }
    void gate;
  } finally {
    clearInterval(heartbeatTimer);
    const end = await postJson(sessionUrl('end'), {}, auth).catch(() => undefined);
    if (end?.status === 200) {
      summary.endReason = end.body.endReason ?? summary.endReason;
      summary.billableSeconds = end.body.billableSeconds;
    }
    stop.abort();
    if (ws !== undefined && ws.readyState !== ws.CLOSED) {
      ws.close();
      await Promise.race([once(ws, 'close'), sleep(2000)]);
    }
    await output?.close();
  }
  return summary;
}

function argument(args: string[], name: string, fallback?: string): string {
  const i = args.indexOf(`--${name}`);
  const value = i >= 0 ? args[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const summary = await runVoiceCall({
    baseUrl: argument(args, 'base-url', 'http://127.0.0.1:3000'),
    apiKey: argument(args, 'api-key', process.env['PARLEY_API_KEY']),
    assistantId: argument(args, 'assistant'),
    input: await readPcmWav(argument(args, 'in')),
    outputPath: argument(args, 'out', 'assistant.wav'),
    tailMs: Number(argument(args, 'tail-ms', '4000')),
    recordingConsent: args.includes('--record'),
    onEvent: (e) => process.stderr.write(`${JSON.stringify(e)}\n`),
  });
  process.stdout.write(`${JSON.stringify(summary)}\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}

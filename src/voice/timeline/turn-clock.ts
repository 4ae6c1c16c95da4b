import type { TimelineTurn, TurnPart } from './types.js';

/** What the turn clock reports each finished turn to (metrics: turn latency and time to first audio). */
export interface TurnObserver {
  turn(latencyMs: number, firstAudioMs: number): void;
}

/** Where it records (the call's timeline). */
interface TurnSink {
  readonly now: () => number;
  elapsed(at: number): number;
  record(type: string, detail?: Record<string, number | string>, at?: number): void;
  addTurn(turn: TimelineTurn): void;
}

/** Caller frames remembered (20 ms frames: about ten seconds), and provider appends. */
const READ_RING = 512;
const SENT_RING = 256;

/**
 * Times one call's turns: from the caller's end of speech to the first answer audio Parley wrote to the caller,
 * split into parts that add up (each rounded to 0.1 ms) and owned:
 *
 * - `caller_audio_held` (relay): Parley read the frame that ends the caller's speech until the provider adapter
 *   handed it to the provider's socket (audio gathered behind an undrained write, at most VOICE_PROVIDER_APPEND_MS, and the adapter's queue);
 * - `provider_first_audio` (provider): from then until the answer's first audio reached Parley (the provider's end
 *   of speech detection, its model and its voice, and the network both ways);
 * - `grounding` (platform): the time the gate waited for Parley's answer to a question the model delegated (taken out
 *   of the provider's part or the gate's, wherever it fell);
 * - `tool` (owner): the owner's tools' own time, when the turn's first audio came only after they had finished (the
 *   caller waited on the owner's server; taken out of the provider's part or the gate's). A tool's start message
 *   usually ends the silence before that, and then the part is 0;
 * - `gate` (relay): from the answer's first audio until the gate let it through, grounding aside (audio withheld
 *   meanwhile is not played);
 * - `answer_audio_held` (relay): from the audio the gate let through until it was written to the caller.
 *
 * The caller's end of speech is where the provider's input transcript says it is, on the provider's audio timeline
 * (milliseconds of caller audio it received); the clock maps it to the time Parley read that audio and the time it
 * left for the provider with two rings of preallocated numbers filled per frame (no allocation per frame). Audio the
 * provider ignores (while muted) shifts that mapping: a turn right after an unmute may look longer than it was.
 */
export class TurnClock {
  private readonly readBytes = new Float64Array(READ_RING);
  private readonly readAt = new Float64Array(READ_RING);
  private readNext = 0;
  private readTotal = 0;
  private readonly sentBytes = new Float64Array(SENT_RING);
  private readonly sentAt = new Float64Array(SENT_RING);
  private sentNext = 0;
  private sentTotal = 0;
  /** The provider adapter reports when audio leaves for the provider (else that part is 0). */
  private sentSeen = false;
  /** Bytes of caller audio per millisecond in the call's format. */
  bytesPerMs = 48;

  private awaiting = false;
  private stopReadAt = 0;
  private stopSentAt = 0;
  private firstAt = 0;
  private passAt = 0;
  /** While this turn's gate waited for a grounded answer (0: not yet / not at all). */
  private groundingFrom = 0;
  private groundingTo = 0;
  /** While this turn's owner tools ran (0: not yet / not at all), and how many run now. */
  private toolFrom = 0;
  private toolTo = 0;
  private toolsRunning = 0;
  private turns = 0;

  constructor(
    private readonly sink: TurnSink,
    private readonly observer?: TurnObserver,
  ) {}

  /** Turns already counted elsewhere (a call taken over from a dead instance): the next one is `turns + 1`. */
  countFrom(turns: number): void {
    this.turns = Math.max(this.turns, turns);
  }

  // ---- per frame (the pump and the provider adapter): no allocation -------------------------------------------

  /** Caller audio Parley read and handed to the provider link. */
  callerAudio(bytes: number): void {
    this.readTotal += bytes;
    const i = this.readNext;
    this.readBytes[i] = this.readTotal;
    this.readAt[i] = this.sink.now();
    this.readNext = i + 1 === READ_RING ? 0 : i + 1;
  }

  /** Caller audio the provider adapter handed to the provider's socket. */
  audioSent(bytes: number): void {
    this.sentSeen = true;
    this.sentTotal += bytes;
    const i = this.sentNext;
    this.sentBytes[i] = this.sentTotal;
    this.sentAt[i] = this.sink.now();
    this.sentNext = i + 1 === SENT_RING ? 0 : i + 1;
  }

  /** Answer audio arrived from the provider (before the gate looks at it). */
  providerAudio(gateOpen: boolean): void {
    if (!this.awaiting) return;
    if (this.firstAt === 0) this.firstAt = this.sink.now();
    if (gateOpen && this.passAt === 0) this.passAt = this.sink.now();
  }

  /** The gate now holds the answer for a delegated question (grounding). */
  groundingStarted(): void {
    if (this.awaiting && this.groundingFrom === 0) this.groundingFrom = this.sink.now();
  }

  /** The gate moved on from waiting for a grounded answer. */
  groundingEnded(): void {
    if (this.groundingFrom !== 0 && this.groundingTo === 0) this.groundingTo = this.sink.now();
  }

  /** A request to one of the owner's tools left. */
  toolStarted(): void {
    if (this.toolsRunning++ === 0 && this.awaiting && this.toolFrom === 0) this.toolFrom = this.sink.now();
  }

  /** A tool request finished (however it ended). */
  toolEnded(): void {
    this.toolsRunning = Math.max(0, this.toolsRunning - 1);
    if (this.toolsRunning === 0 && this.toolFrom !== 0 && this.toolTo === 0) this.toolTo = this.sink.now();
  }

  /** Answer audio written to the caller's connection: the first one of a turn ends it. */
  assistantAudioWritten(): void {
    if (!this.awaiting || this.passAt === 0) return;
    this.finish(this.sink.now());
  }

  /**
   * The provider plays the answer to the caller itself (WebRTC: Parley sees a copy on the sideband): the turn ends at
   * the audio the gate let through, since nothing stands between it and the caller (Parley's own work on the copy,
   * its listeners and recorder, is not the caller's wait).
   */
  assistantAudioPlayedByProvider(): void {
    if (!this.awaiting || this.passAt === 0) return;
    this.finish(this.passAt);
  }

  // ---- per transcript fragment ----------------------------------------------------------------------------------

  /** The provider heard the caller speak until `endMs` on its audio timeline: a turn waits for its answer. */
  callerSpeech(endMs: number): void {
    const bytes = endMs * this.bytesPerMs;
    const now = this.sink.now();
    // The first words of a turn (the caller's, as the provider heard them) open it; the answer's first audio ends it.
    if (!this.awaiting) this.sink.record('turn_started', { turn: this.turns + 1 }, now);
    const readAt = lookup(this.readBytes, this.readAt, this.readNext, READ_RING, bytes) ?? now;
    const sentAt = this.sentSeen
      ? (lookup(this.sentBytes, this.sentAt, this.sentNext, SENT_RING, bytes) ?? now)
      : readAt;
    this.awaiting = true;
    this.stopReadAt = Math.min(readAt, now);
    this.stopSentAt = Math.min(now, Math.max(sentAt, this.stopReadAt));
    this.firstAt = 0;
    this.passAt = 0;
    this.groundingFrom = 0;
    this.groundingTo = 0;
    this.toolFrom = this.toolsRunning > 0 ? now : 0;
    this.toolTo = 0;
  }

  private finish(writtenAt: number): void {
    this.awaiting = false;
    const firstAt = Math.max(this.firstAt, this.stopSentAt);
    const passAt = Math.max(this.passAt, firstAt);
    const writeAt = Math.max(writtenAt, passAt);
    const index = ++this.turns;
    // Grounding is cut out of whichever span it fell in: the provider waiting for it, or its audio held by the gate.
    const from = this.groundingFrom;
    const to = from === 0 ? 0 : this.groundingTo === 0 ? passAt : this.groundingTo;
    const inProvider = overlap(from, to, this.stopSentAt, firstAt);
    const inGate = overlap(from, to, firstAt, passAt);
    // Only a tool that finished before the first audio kept the caller waiting (else its start message spoke first).
    const toolFrom = this.toolTo !== 0 && this.toolTo <= firstAt ? this.toolFrom : 0;
    const toolInProvider = overlap(toolFrom, this.toolTo, this.stopSentAt, firstAt);
    const toolInGate = overlap(toolFrom, this.toolTo, firstAt, passAt);
    const parts: TurnPart[] = [
      { name: 'caller_audio_held', ms: tenth(this.stopSentAt - this.stopReadAt), owner: 'relay' },
      {
        name: 'provider_first_audio',
        ms: tenth(firstAt - this.stopSentAt - inProvider - toolInProvider),
        owner: 'provider',
      },
      { name: 'grounding', ms: tenth(inProvider + inGate), owner: 'platform' },
      { name: 'tool', ms: tenth(toolInProvider + toolInGate), owner: 'owner' },
      { name: 'gate', ms: tenth(passAt - firstAt - inGate - toolInGate), owner: 'relay' },
      { name: 'answer_audio_held', ms: tenth(writeAt - passAt), owner: 'relay' },
    ];
    const latencyMs = tenth(writeAt - this.stopReadAt);
    this.sink.addTurn({
      index,
      userStoppedAtMs: tenth(this.sink.elapsed(this.stopReadAt)),
      firstAudioAtMs: tenth(this.sink.elapsed(writeAt)),
      latencyMs,
      parts,
    });
    this.sink.record('first_audio', { turn: index, latencyMs }, writeAt);
    this.observer?.turn(latencyMs, parts[1]!.ms);
  }
}

/** The time of the first ring entry whose running total reaches `bytes` (undefined: none kept does). */
function lookup(
  totals: Float64Array,
  times: Float64Array,
  next: number,
  size: number,
  bytes: number,
): number | undefined {
  let found: number | undefined;
  for (let k = 1; k <= size; k++) {
    const i = (next - k + size) % size;
    const total = totals[i]!;
    if (total === 0 || total < bytes) break;
    found = times[i];
  }
  return found;
}

/** Length of [a, b] within [c, d] (0 when a is 0: no such span). */
function overlap(a: number, b: number, c: number, d: number): number {
  if (a === 0) return 0;
  return Math.max(0, Math.min(b, d) - Math.max(a, c));
}

function tenth(ms: number): number {
  return Math.round(Math.max(0, ms) * 10) / 10;
}

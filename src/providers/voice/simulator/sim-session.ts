import type { WebSocket } from 'ws';
import type { ServerEvent, SessionResource } from 'openai/resources/live/live';
import { turnTakingFromInstructions, type SimulatorFaults } from './faults.js';
import type { SimTiming, SimulatedSessionRecord, VoiceSimulatorStats, Word } from './types.js';
import * as ev from './events.js';
import type { SimAudio } from './audio.js';
import { wordStream } from './media.js';
import { SimBackend } from './backend.js';

const APPEND_PREFIX = Buffer.from('{"type":"session.input_audio.append","audio":"', 'latin1');
const SPEECH_PEAK = 300;
const GARBAGE: (string | Buffer)[] = ['not json {', Buffer.from([1, 2, 3]), '{"no_type":true}', '[1,2]'];

/**
 * One simulated GPT-Live session. It outlives its socket: after a drop it waits `resumeWindowMs` for a client to come
 * back with `?session_id=`, counts usage, and replays its recent event_id'd events after `session.started` (so the
 * client must dedupe). Audio is never replayed. Its backend (function calls): backend.ts.
 */
export class SimSession {
  ws: WebSocket | null = null;
  private readonly startedAt: number;
  private readonly nextWord: () => string;
  private eventSeq = 0;
  private ring: string[] = [];
  private usageTimer: NodeJS.Timeout | undefined;
  private dropTimer: NodeJS.Timeout | undefined;
  private resumeTimer: NodeJS.Timeout | undefined;
  private outputTimer: NodeJS.Timeout | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  private usageTicks = 0;
  private usageJump = 0;
  private closeRequested = false;
  private dropped = false;
  private inputMs = 0;
  private chunkBytes = 0;
  private chunkPeak = 0;
  private chunkStartMs = 0;
  private voiced = false;
  /** Silence still needed before the caller's utterance ends (the session's end-of-speech silence). */
  private silenceLeftMs = 0;
  private delegated = false;
  private echoAnnounced = false;
  private outputCursorMs = 0;
  private outputOffset = 0;
  private speech: Word[] = [];
  /** Paced echo: input audio (base64, concatenated) waiting to be spoken, and the pacing state. */
  private echoB64 = '';
  private echoTimer: NodeJS.Timeout | undefined;
  private echoDueAt = 0;
  private echoInputSinceTick = false;
  private echoSpokenMs = 0;
  private readonly backend: SimBackend;

  constructor(
    readonly record: SimulatedSessionRecord,
    private readonly resource: SessionResource,
    private readonly faults: SimulatorFaults,
    seed: number,
    private readonly timing: SimTiming,
    private readonly stats: VoiceSimulatorStats,
    /** The session's audio format: what it hears and how it speaks (its voice, converted once). */
    private readonly audio: SimAudio,
    private readonly onEnd: (id: string) => void,
  ) {
    this.startedAt = timing.now();
    this.nextWord = wordStream(seed);
    this.tickUsage = this.tickUsage.bind(this);
    this.pumpOutput = this.pumpOutput.bind(this);
    this.backend = new SimBackend(faults.tools, resource, record, this);
    record.turnTaking = turnTakingFromInstructions(resource.instructions);
  }

  get id(): string {
    return this.record.id;
  }

  get ended(): boolean {
    return this.record.ended;
  }

  /** Attach a socket: first start or resume. Sends session.started, then (on resume) the replay ring. */
  attach(ws: WebSocket, resumed: boolean): void {
    if (this.ws !== null) this.ws.terminate();
    if (this.resumeTimer !== undefined) clearTimeout(this.resumeTimer);
    this.resumeTimer = undefined;
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (ws === this.ws) this.onMessage(data as Buffer, isBinary);
    });
    ws.on('close', () => this.onSocketClose(ws));
    this.emit(ev.started(this.eventId(), this.resource));
    if (resumed) {
      this.record.resumes++;
      this.stats.resumes++;
      for (const frame of this.ring) this.sendRaw(frame);
    } else {
      this.usageTimer = setInterval(this.tickUsage, this.timing.usageIntervalMs);
      if (this.faults.stallReadsMs !== undefined) {
        // A provider that stops reading: the client's socket buffers fill and its own queue must bound memory.
        ws.pause();
        this.stallTimer = setTimeout(() => ws.resume(), this.faults.stallReadsMs);
      }
      if (this.faults.dropAfterMs !== undefined) {
        this.dropTimer = setTimeout(() => this.ws?.terminate(), this.faults.dropAfterMs);
      }
    }
    if (this.faults.garbage) for (const junk of GARBAGE) this.sendRaw(junk);
  }

  /** Cumulative usage: wall time since start plus any injected jump, in seconds (ms precision). */
  usageNow(): number {
    return Math.round(this.timing.now() - this.startedAt) / 1000 + this.usageJump;
  }

  /** Server shutdown or expiry: tell an attached client, then end. */
  hangUp(reason: 'remote_hangup'): void {
    if (this.ended) return;
    const seconds = this.usageNow();
    if (this.ws !== null) this.emit(ev.closed(this.eventId(), reason, this.resource, seconds));
    this.record.closedSent = this.ws !== null;
    this.end(reason, seconds);
    this.ws?.close(1000);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary)
      return this.emit(
        ev.error(this.eventId(), 'invalid_request_error', 'binary_not_supported', 'Binary frames are not supported.'),
      );
    if (
      data.length > APPEND_PREFIX.length &&
      data.compare(APPEND_PREFIX, 0, APPEND_PREFIX.length, 0, APPEND_PREFIX.length) === 0
    ) {
      if (this.timing.recordWire) this.record.wireIn.push(data.toString('utf8'));
      return this.onAudio(data.toString('latin1', APPEND_PREFIX.length, data.length - 2));
    }
    const text = data.toString('utf8');
    if (this.timing.recordWire) this.record.wireIn.push(text);
    let msg: { type?: unknown; audio?: unknown; content?: unknown; item?: unknown };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      return this.emit(ev.error(this.eventId(), 'invalid_request_error', 'invalid_json', 'The frame is not JSON.'));
    }
    const type = typeof msg.type === 'string' ? msg.type : '';
    if (type === 'session.input_audio.append' && typeof msg.audio === 'string') return this.onAudio(msg.audio);
    this.record.clientEvents.push(type);
    const at = Math.round(this.timing.now() - this.startedAt);
    switch (type) {
      case 'session.input_audio.mute':
      case 'session.input_audio.unmute':
        this.record.muted = type === 'session.input_audio.mute';
        return this.emit(ev.muted(this.eventId(), this.record.muted));
      case 'session.instructions.append':
        return this.emit(ev.appended('session.instructions.appended', this.eventId(), at));
      case 'session.thinking.append':
        return this.emit(ev.appended('session.thinking.appended', this.eventId(), at));
      case 'session.commentary.append':
        this.emit(ev.appended('session.commentary.appended', this.eventId(), at));
        return this.speak(typeof msg.content === 'string' ? msg.content.split(/\s+/).filter(Boolean) : []);
      case 'session.update':
        return this.emit(ev.updated(this.eventId(), this.resource));
      case 'session.close':
        return this.onCloseRequested();
      case 'response.item.create':
        return this.backend.item(msg.item);
      case 'response.create':
        return this.backend.respond();
      case 'session.start':
        return this.emit(
          ev.error(
            this.eventId(),
            'invalid_request_error',
            'session_already_started',
            'The session has already started.',
          ),
        );
      default:
        return this.emit(
          ev.error(this.eventId(), 'invalid_request_error', 'unknown_event', 'Unsupported client event.'),
        );
    }
  }

  /** Caller audio (base64, the session's format): from the primary socket, or from a WebRTC peer's hub. */
  onAudio(base64: string): void {
    this.record.audioFramesIn++;
    this.stats.audioFramesIn++;
    if (this.faults.echo) {
      // Echo mode: the same payload straight back, no decode/re-encode, so the bench measures the relay, not us.
      // The first echo is announced with one output transcript, as a real assistant's speech is: without it a
      // client that honours the playback gate (Parley's relay) would never hear the echo.
      if (!this.echoAnnounced && this.faults.echoSilent !== true && this.faults.echoPacedMs === undefined) {
        this.echoAnnounced = true;
        const at = Math.round(this.timing.now() - this.startedAt);
        this.record.outputTranscripts.push({ text: 'echo', startMs: at, endMs: at });
        this.emit(ev.transcript('session.output_transcript.delta', this.eventId(), 'echo', at, at));
      }
      if (this.faults.echoPacedMs !== undefined) return this.queueEcho(base64);
      this.record.audioFramesOut++;
      this.stats.audioFramesOut++;
      this.sendRaw(ev.OUTPUT_AUDIO_PREFIX + base64 + ev.OUTPUT_AUDIO_SUFFIX);
      return;
    }
    if (this.record.muted) return;
    const pcm = Buffer.from(base64, 'base64');
    if (this.chunkBytes === 0) this.chunkStartMs = Math.round(this.inputMs);
    this.inputMs += pcm.length / this.audio.bytesPerMs;
    this.chunkBytes += pcm.length;
    this.chunkPeak = Math.max(this.chunkPeak, this.audio.peak(pcm));
    if (this.chunkBytes < this.timing.transcriptChunkMs * this.audio.bytesPerMs) return;
    const isVoiced = this.chunkPeak > SPEECH_PEAK;
    this.chunkBytes = 0;
    this.chunkPeak = 0;
    if (isVoiced) {
      const word = this.nextWord();
      const endMs = Math.round(this.inputMs);
      this.record.inputTranscripts.push({ text: word, startMs: this.chunkStartMs, endMs });
      this.emit(ev.transcript('session.input_transcript.delta', this.eventId(), word, this.chunkStartMs, endMs));
      // The caller talks over the answer: a provider that hears it stops speaking (what was left is never sent).
      if (this.faults.bargeIn === true) this.speech = [];
      this.silenceLeftMs = this.record.turnTaking.endOfSpeechSilenceMs ?? 0;
    } else if (this.voiced && (this.silenceLeftMs -= this.timing.transcriptChunkMs) > 0) {
      return; // a pause shorter than the session's end-of-speech silence: the caller's turn goes on
    } else if (this.voiced) this.onUtteranceEnd();
    this.voiced = isVoiced;
  }

  /**
   * Paced echo: keep the input audio and speak it back like a provider does, one delta of `echoPacedMs` of audio
   * every `echoPacedMs` of wall time (real-time pace), cut independently of how the input was framed. Base64 of
   * whole 3-byte groups concatenates as is (a 20 ms frame is 960 bytes: no padding), so nothing is decoded; padded
   * input (odd sizes) is re-encoded once. The first delta leaves one period after the first audio arrived.
   */
  private queueEcho(base64: string): void {
    if (base64.endsWith('=') || this.echoB64.endsWith('=')) {
      this.echoB64 = Buffer.concat([Buffer.from(this.echoB64, 'base64'), Buffer.from(base64, 'base64')]).toString(
        'base64',
      );
    } else {
      this.echoB64 += base64;
    }
    this.echoInputSinceTick = true;
    if (this.echoTimer === undefined) {
      this.echoDueAt = this.timing.now() + this.faults.echoPacedMs!;
      this.echoTimer = setTimeout(this.speakEcho, this.faults.echoPacedMs!);
    }
  }

  private readonly speakEcho = (): void => {
    this.echoTimer = undefined;
    if (this.ended) return;
    const periodMs = this.faults.echoPacedMs!;
    const chunkChars = Math.round((periodMs * this.audio.bytesPerMs) / 3) * 4;
    // A full delta when there is one; a short tail only once the caller stopped sending (end of speech).
    let take = this.echoB64.length >= chunkChars ? chunkChars : this.echoInputSinceTick ? 0 : this.echoB64.length;
    // Behind by more than three deltas (a stalled timer): catch up with one double delta, as providers burst.
    if (this.echoB64.length > 3 * chunkChars) take = 2 * chunkChars;
    this.echoInputSinceTick = false;
    if (take > 0) {
      const chunk = this.echoB64.slice(0, take);
      this.echoB64 = this.echoB64.slice(take);
      if (!this.echoAnnounced || this.echoSpokenMs >= 300) this.announceEcho();
      this.echoSpokenMs += ((take / 4) * 3) / this.audio.bytesPerMs;
      this.record.audioFramesOut++;
      this.stats.audioFramesOut++;
      this.sendRaw(ev.OUTPUT_AUDIO_PREFIX + chunk + ev.OUTPUT_AUDIO_SUFFIX);
    }
    if (this.echoB64.length === 0 && take === 0) return;
    this.echoDueAt += periodMs;
    this.echoTimer = setTimeout(this.speakEcho, Math.max(0, this.echoDueAt - this.timing.now()));
  };

  /** The transcript of what the paced echo is saying (one fragment per ~300 ms of speech, like word timings). */
  private announceEcho(): void {
    this.echoAnnounced = true;
    this.echoSpokenMs = 0;
    if (this.faults.echoSilent === true) return;
    const at = Math.round(this.timing.now() - this.startedAt);
    this.record.outputTranscripts.push({ text: 'echo', startMs: at, endMs: at + 300 });
    this.emit(ev.transcript('session.output_transcript.delta', this.eventId(), 'echo', at, at + 300));
  }

  private onUtteranceEnd(): void {
    if (this.faults.delegate && !this.delegated && this.resource.delegation?.type === 'client') {
      this.delegated = true;
      const id = `del_${this.id.slice(-8)}_${this.record.delegations.length + 1}`;
      this.record.delegations.push(id);
      this.emit(ev.delegationCreated(this.eventId(), id, Math.round(this.inputMs)));
      return;
    }
    if (this.backend.reply()) return;
    this.speak([this.nextWord(), this.nextWord(), this.nextWord()]);
  }

  speak(words: string[]): void {
    const frames = Math.max(1, Math.round(this.timing.wordMs / 20));
    for (const text of words) this.speech.push({ text, framesLeft: frames });
    if (this.outputTimer === undefined) this.pumpOutput();
  }

  /** Send the next output frame (and the word's transcript on its first frame); reschedules itself while speaking. */
  private pumpOutput(): void {
    this.outputTimer = undefined;
    do {
      const word = this.speech[0];
      if (word === undefined || this.ended) return;
      if (word.framesLeft === Math.max(1, Math.round(this.timing.wordMs / 20))) {
        const startMs = Math.max(this.outputCursorMs, Math.round(this.timing.now() - this.startedAt));
        this.outputCursorMs = startMs + this.timing.wordMs;
        this.record.outputTranscripts.push({ text: word.text, startMs, endMs: this.outputCursorMs });
        this.emit(
          ev.transcript('session.output_transcript.delta', this.eventId(), word.text, startMs, this.outputCursorMs),
        );
      }
      if (this.ws !== null) {
        const voice = this.audio.voice;
        const end = this.outputOffset + this.audio.frameBytes;
        const frame = voice.toString('base64', this.outputOffset, end);
        this.outputOffset = end >= voice.length ? 0 : end;
        this.record.audioFramesOut++;
        this.stats.audioFramesOut++;
        this.sendRaw(ev.OUTPUT_AUDIO_PREFIX + frame + ev.OUTPUT_AUDIO_SUFFIX);
      }
      if (--word.framesLeft === 0) this.speech.shift();
    } while (this.timing.outputFrameIntervalMs === 0);
    if (this.speech.length > 0) this.outputTimer = setTimeout(this.pumpOutput, this.timing.outputFrameIntervalMs);
  }

  private tickUsage(): void {
    this.usageTicks++;
    if (this.usageTicks === 2 && this.faults.usageJumpSeconds !== undefined)
      this.usageJump += this.faults.usageJumpSeconds;
    const seconds = this.usageNow();
    this.record.usageSeconds = seconds;
    this.emit(ev.usageUpdated(this.eventId(), seconds));
    if (this.faults.garbage) this.sendRaw(GARBAGE[this.usageTicks % GARBAGE.length]!);
  }

  private onCloseRequested(): void {
    this.closeRequested = true;
    // withhold-closed: say nothing and keep the socket open; the client has to give up on final usage itself.
    if (this.faults.withholdClosed) return;
    const seconds = this.usageNow();
    this.emit(ev.closed(this.eventId(), 'close_requested', this.resource, seconds));
    this.record.closedSent = true;
    this.end('close_requested', seconds);
    this.ws?.close(1000);
  }

  private onSocketClose(ws: WebSocket): void {
    if (ws !== this.ws) return;
    this.ws = null;
    if (this.ended) return;
    if (this.closeRequested) return this.end('close_requested', this.usageNow());
    this.dropped = true;
    // Detached: the session lives on for a while so the client can resume it.
    this.resumeTimer = setTimeout(() => this.end('connection_lost', this.usageNow()), this.timing.resumeWindowMs);
  }

  /** Whether a resume for this session may attach now. */
  canResume(): boolean {
    return !this.ended && (this.dropped || this.ws !== null);
  }

  private end(reason: NonNullable<SimulatedSessionRecord['endReason']>, seconds: number): void {
    if (this.ended) return;
    this.record.ended = true;
    this.record.endReason = reason;
    this.record.usageSeconds = seconds;
    this.stats.sessionsActive--;
    for (const timer of [this.usageTimer, this.dropTimer, this.resumeTimer]) clearTimeout(timer);
    for (const timer of [this.outputTimer, this.stallTimer, this.echoTimer]) clearTimeout(timer);
    this.speech = [];
    this.echoB64 = '';
    this.onEnd(this.id);
  }

  eventId(): string {
    return `evt_${this.id.slice(5, 13)}_${++this.eventSeq}`;
  }

  /** Send (or, while detached, only remember) a typed server event. Events with an event_id enter the replay ring. */
  emit(event: ServerEvent): void {
    const frame = ev.serialize(event);
    if ('event_id' in event && event.type !== 'session.started') {
      this.ring.push(frame);
      if (this.ring.length > this.timing.replayCount) this.ring.shift();
    }
    this.sendRaw(frame);
  }

  private sendRaw(frame: string | Buffer): void {
    const ws = this.ws;
    if (ws === null || ws.readyState !== ws.OPEN) return;
    if (this.timing.recordWire && typeof frame === 'string') this.record.wireOut.push(frame);
    ws.send(frame);
  }
}

import { ndjsonLine } from '../../http/index.js';

/**
 * The playback gate (docs/voice-protocol.md, the gate). The client keeps assistant audio and captions muted unless
 * the latest decision is open; Parley's own relay withholds assistant audio while it is closed (`isOpen`).
 * Lines: `{"type":"gate","seq","state","reason","inputEndMs"}`, `{"type":"keepalive"}` every 10 s of silence,
 * `{"type":"end","endReason"}` last.
 */
export type GateState = 'open' | 'closed';
export type GateReason = 'start' | 'user_speaking' | 'pending_backend' | 'backend_answer' | 'social';

export interface GateDecision {
  type: 'gate';
  seq: number;
  state: GateState;
  reason: GateReason;
  /** End of the visitor's latest speech on the provider timeline (ms), when the decision is about it. */
  inputEndMs: number | null;
}

export const GATE_KEEPALIVE_MS = 10_000;
export const MAX_GATE_STREAMS = 4;
/** Lines a slow reader may have waiting; beyond it the oldest decisions go (the newest decision is what counts). */
const MAX_QUEUED_LINES = 32;

const OPEN_REASONS: ReadonlySet<GateReason> = new Set(['backend_answer', 'social']);
const KEEPALIVE_LINE = ndjsonLine({ type: 'keepalive' });

/** One NDJSON reader: a small queue drained by the route's writer loop (which respects backpressure). */
export class GateStream {
  private queue: string[] = [];
  private waiter: ((line: string | null) => void) | undefined;
  private closed = false;
  lastPushAt: number;

  constructor(
    private readonly onClose: (stream: GateStream) => void,
    now: number,
  ) {
    this.lastPushAt = now;
  }

  push(line: string, now: number): void {
    if (this.closed) return;
    this.lastPushAt = now;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter(line);
      return;
    }
    if (this.queue.length >= MAX_QUEUED_LINES) this.queue.shift();
    this.queue.push(line);
  }

  /** The next line to write, or null once the stream is closed and drained. */
  next(): Promise<string | null> {
    const line = this.queue.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Stop accepting lines (reader gone, or the end line was queued). Frees the slot at once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(this.queue.shift() ?? null);
    this.onClose(this);
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/**
 * Where the gate's seq starts for the owner at an ownership generation: 0 for the instance that minted the call
 * (generation 1), then a million per takeover, far above the decisions one owner makes in a call (a few per turn), so
 * a client that followed the dead owner takes the survivor's decisions as newer.
 */
export function gateSeqBase(generation: number): number {
  return Math.max(0, generation - 1) * 1_000_000;
}

/** The gate of one session: the current decision, the open streams (at most 4) and the end line. */
export class GateChannel {
  private decision: GateDecision = { type: 'gate', seq: 0, state: 'closed', reason: 'start', inputEndMs: null };
  private decisionLine = ndjsonLine(this.decision);
  private readonly streams = new Set<GateStream>();
  private endLine: string | undefined;

  constructor(
    private readonly now: () => number,
    /** Told of every new decision (the media relay mirrors the state to the caller). */
    private readonly observe?: (decision: Readonly<GateDecision>) => void,
    /**
     * The first decision's seq. Clients keep the decision with the highest seq, so a call that another instance takes
     * over continues above anything its dead owner sent ({@link gateSeqBase}).
     */
    firstSeq = 0,
  ) {
    if (firstSeq !== 0) {
      this.decision = { ...this.decision, seq: firstSeq };
      this.decisionLine = ndjsonLine(this.decision);
    }
  }

  /** Hot path for the relay: may assistant audio be played right now? */
  get isOpen(): boolean {
    return this.decision.state === 'open';
  }

  get current(): Readonly<GateDecision> {
    return this.decision;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  get ended(): boolean {
    return this.endLine !== undefined;
  }

  /** Publish a new decision (no-op when nothing changed). The state follows from the reason. */
  decide(reason: GateReason, inputEndMs: number | null = null): void {
    if (this.endLine !== undefined) return;
    const state: GateState = OPEN_REASONS.has(reason) ? 'open' : 'closed';
    const d = this.decision;
    if (d.reason === reason && d.inputEndMs === inputEndMs) return;
    this.decision = { type: 'gate', seq: d.seq + 1, state, reason, inputEndMs };
    this.decisionLine = ndjsonLine(this.decision);
    const now = this.now();
    for (const stream of this.streams) stream.push(this.decisionLine, now);
    this.observe?.(this.decision);
  }

  /**
   * A new reader: first the current decision, then every new one. Null when MAX_GATE_STREAMS are open.
   * After the end, a reader gets the last decision and the end line, then its stream closes.
   */
  open(): GateStream | null {
    if (this.endLine === undefined && this.streams.size >= MAX_GATE_STREAMS) return null;
    const now = this.now();
    const stream = new GateStream((s) => this.streams.delete(s), now);
    stream.push(this.decisionLine, now);
    if (this.endLine !== undefined) {
      stream.push(this.endLine, now);
      stream.close();
      return stream;
    }
    this.streams.add(stream);
    return stream;
  }

  /** Called by the supervisor's tick: a keepalive to every stream that was quiet for 10 s. */
  keepalive(now: number): void {
    for (const stream of this.streams) {
      if (now - stream.lastPushAt >= GATE_KEEPALIVE_MS) stream.push(KEEPALIVE_LINE, now);
    }
  }

  /** The session is over: an end line (which also means closed) to every reader; every stream closes after it. */
  end(endReason: string | null): void {
    if (this.endLine !== undefined) return;
    this.endLine = ndjsonLine({ type: 'end', endReason });
    const now = this.now();
    for (const stream of [...this.streams]) {
      stream.push(this.endLine, now);
      stream.close();
    }
  }
}

import { TurnClock, type TurnObserver } from './turn-clock.js';
import type { OmittedEvents, TimelineDetail, TimelineEvent, TimelineSnapshot, TimelineTurn } from './types.js';

/** Events kept from the start of a call, and from its end (a ring); the middle is counted. */
export const TIMELINE_HEAD_EVENTS = 100;
export const TIMELINE_TAIL_EVENTS = 150;
/** Turns kept from the start and from the end of a call. */
export const TIMELINE_HEAD_TURNS = 40;
export const TIMELINE_TAIL_TURNS = 60;

/** A monotonic millisecond clock (performance.now by default). */
export type MonotonicNow = () => number;

/**
 * The timeline of one call, in memory while it runs: its events (`record(type, detail?)`, the one function every
 * part of a call uses, transports included) and its turns ({@link TurnClock}). Bounded: a long call keeps its first
 * {@link TIMELINE_HEAD_EVENTS} and last {@link TIMELINE_TAIL_EVENTS} events and counts the ones between
 * (`eventsOmitted`), and likewise its turns. Nothing here does I/O: the timeline writer copies a snapshot to the
 * database every few seconds while it is `dirty`, and once more when the call has settled.
 *
 * Nothing is recorded per audio frame: the turn clock keeps per-frame times in preallocated rings.
 */
export class CallTimeline {
  readonly mintedAt: number;
  readonly turnClock: TurnClock;
  /** Changed since the writer last took a snapshot. */
  dirty = true;
  private readonly origin: number;
  private readonly head: TimelineEvent[] = [];
  private readonly tail: TimelineEvent[] = [];
  private tailStart = 0;
  private omitted: OmittedEvents | null = null;
  private lastAtMs = 0;
  private readonly headTurns: TimelineTurn[] = [];
  private readonly tailTurns: TimelineTurn[] = [];
  private tailTurnStart = 0;
  private turnsOmitted = 0;
  private readonly degradedCauses = new Set<string>();

  constructor(
    /** `websocket`, later the phone and WebRTC transports: set by the transport that carries the call. */
    public transport: string,
    readonly now: MonotonicNow = () => performance.now(),
    mintedAt: number = Date.now(),
    observer?: TurnObserver,
  ) {
    this.origin = now();
    this.mintedAt = mintedAt;
    this.turnClock = new TurnClock(this, observer);
  }

  /** Milliseconds since the mint on the monotonic clock (fractional). */
  elapsed(at: number = this.now()): number {
    return at - this.origin;
  }

  /**
   * Record one event now (or at `at`, a time of {@link now} not older than the last event). `detail` holds small
   * flat values (codes, counts, reasons), never transcripts or audio. Cheap: one small object per event.
   */
  record(type: string, detail?: TimelineDetail, at?: number): void {
    const atMs = Math.max(this.lastAtMs, Math.round(this.elapsed(at)));
    this.keep(detail === undefined ? { atMs, type } : { atMs, type, detail });
  }

  /**
   * Carry on what another instance wrote of this call (it died and this one took the call over): its events and turns
   * come first, in the same bounds; the turns counted on from there. Call before recording anything.
   */
  carryOn(earlier: Pick<TimelineSnapshot, 'events' | 'eventsOmitted' | 'turns' | 'turnsOmitted'>): void {
    if (earlier.eventsOmitted !== null)
      this.omitted = { ...earlier.eventsOmitted, byType: { ...earlier.eventsOmitted.byType } };
    for (const event of earlier.events) this.keep(event);
    for (const turn of earlier.turns) this.addTurn(turn);
    this.turnsOmitted += earlier.turnsOmitted;
    this.turnClock.countFrom(earlier.turns.length + earlier.turnsOmitted);
  }

  private keep(event: TimelineEvent): void {
    this.lastAtMs = Math.max(this.lastAtMs, event.atMs);
    this.dirty = true;
    if (this.head.length < TIMELINE_HEAD_EVENTS) {
      this.head.push(event);
      return;
    }
    if (this.tail.length < TIMELINE_TAIL_EVENTS) {
      this.tail.push(event);
      return;
    }
    // The oldest event of the tail leaves it for the count in the middle.
    const gone = this.tail[this.tailStart]!;
    this.tail[this.tailStart] = event;
    this.tailStart = (this.tailStart + 1) % TIMELINE_TAIL_EVENTS;
    const omitted = (this.omitted ??= { count: 0, fromMs: gone.atMs, toMs: gone.atMs, byType: {} });
    omitted.count++;
    omitted.toMs = gone.atMs;
    omitted.byType[gone.type] = (omitted.byType[gone.type] ?? 0) + 1;
  }

  /**
   * A reason the call is degraded began (`on`) or ended: `degraded` is recorded when the first one begins,
   * `recovered` when the last one ends (the provider link reconnecting, this instance losing its shared state).
   */
  setDegraded(cause: string, on: boolean): void {
    const was = this.degradedCauses.size > 0;
    if (on) this.degradedCauses.add(cause);
    else this.degradedCauses.delete(cause);
    const is = this.degradedCauses.size > 0;
    if (is && !was) this.record('degraded', { cause });
    else if (!is && was) this.record('recovered', { cause });
  }

  /** A finished turn (from the turn clock). */
  addTurn(turn: TimelineTurn): void {
    this.dirty = true;
    if (this.headTurns.length < TIMELINE_HEAD_TURNS) {
      this.headTurns.push(turn);
      return;
    }
    if (this.tailTurns.length < TIMELINE_TAIL_TURNS) {
      this.tailTurns.push(turn);
      return;
    }
    this.tailTurns[this.tailTurnStart] = turn;
    this.tailTurnStart = (this.tailTurnStart + 1) % TIMELINE_TAIL_TURNS;
    this.turnsOmitted++;
  }

  /** Whether an event of this type was recorded and is still kept (head or tail). */
  has(type: string): boolean {
    return this.head.some((e) => e.type === type) || this.tail.some((e) => e.type === type);
  }

  /** A copy of what is kept, in order (the writer's and the route's view). Clears `dirty`. */
  snapshot(): TimelineSnapshot {
    this.dirty = false;
    return {
      transport: this.transport,
      mintedAt: this.mintedAt,
      events: [...this.head, ...ringInOrder(this.tail, this.tailStart)],
      eventsOmitted: this.omitted === null ? null : { ...this.omitted, byType: { ...this.omitted.byType } },
      turns: [...this.headTurns, ...ringInOrder(this.tailTurns, this.tailTurnStart)],
      turnsOmitted: this.turnsOmitted,
    };
  }
}

function ringInOrder<T>(ring: T[], start: number): T[] {
  return start === 0 ? [...ring] : [...ring.slice(start), ...ring.slice(0, start)];
}

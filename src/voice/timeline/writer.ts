import type { Sql } from '../../db/index.js';
import type { Logger } from '../../log/index.js';
import type { CallTimeline } from './call-timeline.js';
import { upsertTimelines, type TimelineWrite } from './queries.js';
import type { TimelineSnapshot } from './types.js';

/** How often changed timelines are written while calls run (wall time). */
export const TIMELINE_WRITE_EVERY_MS = 5000;
/** Ended calls whose last write waits for the database, at most (memory bound); beyond, the oldest are dropped. */
const MAX_WAITING_FINAL = 10_000;
/** Calls per statement. */
const BATCH = 200;

interface Tracked {
  sessionId: string;
  accountId: string;
  assistantId: string;
  timeline: CallTimeline;
  final: boolean;
}

/**
 * Writes this instance's call timelines to the database off the media path: one timer for every call, one statement
 * per batch of changed timelines every {@link TIMELINE_WRITE_EVERY_MS}, and a last write once a call has settled
 * (right away; retried on the next tick while the database is away). A failed write costs nothing but a later one.
 */
export class TimelineWriter {
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly everyMs = TIMELINE_WRITE_EVERY_MS,
  ) {}

  /** A call stored in the database (its row exists): its timeline is written from now on. */
  track(sessionId: string, accountId: string, assistantId: string, timeline: CallTimeline): void {
    this.tracked.set(sessionId, { sessionId, accountId, assistantId, timeline, final: false });
  }

  /** The call settled: write its timeline one last time now, then forget it once written. */
  finish(sessionId: string): void {
    const t = this.tracked.get(sessionId);
    if (t === undefined) return;
    t.final = true;
    t.timeline.dirty = true;
    if (this.tracked.size > MAX_WAITING_FINAL) {
      for (const [id, other] of this.tracked) {
        if (this.tracked.size <= MAX_WAITING_FINAL) break;
        if (other.final && id !== sessionId) this.tracked.delete(id);
      }
    }
    void this.flush();
  }

  /** Calls whose timeline is held here (live, or settled and not yet written). */
  get size(): number {
    return this.tracked.size;
  }

  /** Stop writing a call's timeline (another instance took the call over and writes it now). */
  forget(sessionId: string): void {
    this.tracked.delete(sessionId);
  }

  /** The in-memory timeline of a call this instance runs (or ran, until its last write landed). */
  live(sessionId: string): { accountId: string; snapshot: TimelineSnapshot } | undefined {
    const t = this.tracked.get(sessionId);
    if (t === undefined) return undefined;
    const dirty = t.timeline.dirty;
    const snapshot = t.timeline.snapshot();
    t.timeline.dirty = dirty; // reading is not writing: the writer still owes the database this version
    return { accountId: t.accountId, snapshot };
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.everyMs);
    this.timer.unref();
  }

  /** Stop the timer and write what changed (the shutdown's settled calls included). */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Write every changed timeline now (one write at a time; a call made meanwhile waits for it, then writes). */
  async flush(): Promise<void> {
    while (this.writing !== undefined) await this.writing;
    this.writing = this.writeChanged().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  private async writeChanged(): Promise<void> {
    const due = [...this.tracked.values()].filter((t) => t.timeline.dirty);
    for (let i = 0; i < due.length; i += BATCH) {
      const slice = due.slice(i, i + BATCH);
      const batch: TimelineWrite[] = slice.map((t) => ({
        sessionId: t.sessionId,
        accountId: t.accountId,
        assistantId: t.assistantId,
        final: t.final,
        snapshot: t.timeline.snapshot(),
      }));
      try {
        await upsertTimelines(this.sql, batch);
        for (const t of slice) if (t.final && !t.timeline.dirty) this.tracked.delete(t.sessionId);
      } catch (err) {
        for (const t of slice) t.timeline.dirty = true;
        this.log.warn({ err: { message: (err as Error).message }, calls: slice.length }, 'voice timelines not written');
        return;
      }
    }
  }
}

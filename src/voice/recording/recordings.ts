import { mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Sql } from '../../db/index.js';
import type { Reply } from '../../http/index.js';
import type { Logger } from '../../log/index.js';
import type { LiveVoiceSession } from '../session/live-session.js';
import * as q from '../queries.js';
import * as rq from './queries.js';
import type { RelayTap } from '../pump/options.js';
import { SESSION_ID_PATTERN } from '../session/session-id.js';
import { CallRecorder, type RecordingPaths } from './recorder.js';
import { recordingReply } from './reply.js';
import { StereoStream, type StereoStreamOptions } from './stereo-stream.js';
import { DiskRecordingStore, type RecordingStore } from './store/index.js';

const SESSION_ID = SESSION_ID_PATTERN;
const WAV_SUFFIX = '.wav';
/** Waits between upload attempts right after a call; past them the sweep keeps trying (the WAV stays on disk). */
const UPLOAD_RETRY_MS = [1000, 5000, 20_000];
/** Recordings past retention deleted by one sweep at most (the next sweep takes the rest). */
const EXPIRE_BATCH = 500;
/** An upload older than this whose call no longer runs was left by an instance that died (finishing takes minutes). */
const STALE_UPLOAD_MS = 3600_000;

export interface RecordingsDeps {
  dataDir: string;
  sql: Sql;
  log: Logger;
  /** Where finished recordings are kept (default: files under DATA_DIR/recordings). */
  store?: RecordingStore;
  /** Upload retry waits (tests shorten them). */
  retryMs?: number[];
  /** Streaming to the bucket while the call runs (tests: part size, retries); `false`: upload once ended. */
  stream?: StereoStreamOptions | false;
}

/**
 * Call recordings of one instance. While a call runs its raw tracks are under `DATA_DIR/recordings/.parts/`; when it
 * ends they become one WAV there, handed to the {@link RecordingStore} (disk: renamed to
 * `DATA_DIR/recordings/<sessionId>.wav`; s3: uploaded, then the local WAV deleted). An upload that fails is retried,
 * then retried by every sweep: the WAV stays on disk until the store has it. A session is recorded only when the
 * assistant records and the caller consented (LiveVoiceSession.recorded): no consent, no file.
 *
 * A recording belongs to its conversation: when the conversation (or its assistant, or the account) is deleted,
 * the routes stop serving it at once (they require the session's conversation link) and {@link sweep} deletes it;
 * {@link remove} deletes one right away for a capability that deletes a conversation.
 */
export class VoiceRecordings {
  readonly dir: string;
  readonly store: RecordingStore;
  private readonly partsDir: string;
  private readonly active = new Map<string, CallRecorder>();
  private readonly streams = new Map<string, StereoStream>();
  private readonly taps = new Map<string, RelayTap>();
  private readonly uploading = new Set<string>();
  private readonly finishing = new Set<Promise<unknown>>();
  private ready = false;
  /** Recordings finished here: streamed to the store during the call, or built from the tracks at its end. */
  readonly counts = { streamed: 0, built: 0 };
  private saidUnsupported = false;

  constructor(
    private readonly deps: RecordingsDeps,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.dir = resolve(deps.dataDir, 'recordings');
    this.partsDir = join(this.dir, '.parts');
    this.store = deps.store ?? new DiskRecordingStore(this.dir);
  }

  /** Where the disk store keeps a session's WAV (whether or not it exists). */
  pathOf(sessionId: string): string {
    if (!SESSION_ID.test(sessionId)) throw new Error('not a voice session id');
    return join(this.dir, `${sessionId}${WAV_SUFFIX}`);
  }

  /** The recorder's files, and a streamed recording's first part (it carries the header, uploaded last). */
  private partsOf(sessionId: string): RecordingPaths & { first: string } {
    return {
      wav: join(this.partsDir, `${sessionId}${WAV_SUFFIX}`),
      caller: join(this.partsDir, `${sessionId}.caller.pcm`),
      assistant: join(this.partsDir, `${sessionId}.assistant.pcm`),
      building: join(this.partsDir, `${sessionId}.wav.part`),
      first: join(this.partsDir, `${sessionId}.first.part`),
    };
  }

  /**
   * The relay's tap for a recorded session (created on the first media socket, kept across reconnects and
   * replacements), or undefined when the session is not recorded.
   */
  tapFor(session: LiveVoiceSession): RelayTap | undefined {
    if (!session.recorded || session.status !== 'active') return undefined;
    const existing = this.taps.get(session.id);
    if (existing !== undefined) return existing;
    if (!this.ready) {
      mkdirSync(this.partsDir, { recursive: true, mode: 0o700 });
      this.ready = true;
    }
    const paths = this.partsOf(session.id);
    const recorder = new CallRecorder(session.id, paths, this.now, session.audio);
    this.active.set(session.id, recorder);
    let tap = recorder.tap;
    const begin = this.store.beginMultipart?.bind(this.store, session.id);
    if (begin !== undefined && this.deps.stream !== false) {
      // Streamed to the bucket as the call goes; the tracks on disk stay the fallback until it is stored.
      const stream = new StereoStream(begin, session.audio, this.now(), this.now, {
        firstPartPath: paths.first,
        ...this.deps.stream,
      });
      this.streams.set(session.id, stream);
      const tracks = recorder.tap;
      tap = {
        caller: (audio) => {
          tracks.caller(audio);
          stream.caller(audio);
        },
        assistant: (audio) => {
          tracks.assistant(audio);
          stream.assistant(audio);
        },
      };
    }
    this.taps.set(session.id, tap);
    const log = session.log;
    session.subscribe({ onEnded: () => void this.finish(session.id, log) });
    return tap;
  }

  private finish(sessionId: string, log: Logger): Promise<void> {
    const recorder = this.active.get(sessionId);
    if (recorder === undefined) return Promise.resolve();
    this.uploading.add(sessionId);
    const stream = this.streams.get(sessionId);
    const done = (async () => {
      if (stream !== undefined) {
        const streamed = await stream.finish();
        if (streamed !== null) {
          await recorder.discard();
          this.counts.streamed++;
          log.info(
            { recordingBytes: streamed.bytes, recordingParts: stream.partsUploaded, store: this.store.kind },
            'voice recording streamed to the store',
          );
          return;
        }
        log.warn(
          { err: stream.failure, store: this.store.kind },
          'voice recording stream gave up; storing it from disk',
        );
      }
      const result = await recorder.finish();
      this.counts.built++;
      log.info(
        { recordingBytes: result?.bytes ?? 0, recordingDroppedBytes: recorder.droppedBytes },
        'voice recording written',
      );
      if (result !== null) await this.upload(sessionId, log, this.deps.retryMs ?? UPLOAD_RETRY_MS);
    })()
      .catch((err: unknown) => log.error({ err }, 'voice recording could not be written'))
      .finally(() => {
        this.active.delete(sessionId);
        this.streams.delete(sessionId);
        this.taps.delete(sessionId);
        this.uploading.delete(sessionId);
        this.finishing.delete(done);
      });
    this.finishing.add(done);
    return done;
  }

  /** Hands the finished local WAV to the store, retrying; false when every attempt failed (the WAV stays). */
  private async upload(sessionId: string, log: Logger, waits: number[]): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.store.put(sessionId, this.partsOf(sessionId).wav);
        if (attempt > 0) log.info({ attempts: attempt + 1 }, 'voice recording stored after retries');
        return true;
      } catch (err) {
        const wait = waits[attempt];
        if (wait === undefined) {
          log.warn({ err, store: this.store.kind }, 'voice recording not stored yet; the sweep will retry');
          return false;
        }
        log.warn({ err, store: this.store.kind, retryInMs: wait }, 'voice recording store refused; retrying');
        await new Promise((r) => setTimeout(r, wait).unref());
      }
    }
  }

  /** Whether the recording of a session is being written right now (the call runs, or it is being built or stored). */
  isWriting(sessionId: string): boolean {
    return this.active.has(sessionId) || this.uploading.has(sessionId);
  }

  /** Whether the store holds the session's finished recording (throws a 503 error when the store does not answer). */
  async exists(sessionId: string): Promise<boolean> {
    return (await this.store.open(sessionId)) !== null;
  }

  /** The recording as an HTTP answer (Range: 206 / 416), or null when none is stored. */
  async playback(sessionId: string, range: string | undefined): Promise<Reply | null> {
    const recording = await this.store.open(sessionId);
    if (recording === null) return null;
    return recordingReply(recording, range, {
      'cache-control': 'private, no-store',
      'content-disposition': `inline; filename="${sessionId}.wav"`,
    });
  }

  /** Wait for recordings being finished (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.finishing.size > 0) await Promise.allSettled([...this.finishing]);
  }

  /**
   * Delete a session's recording now (conversation deleted); true when the store had one. A store that does not
   * answer leaves it to the sweep (the routes stop serving it at once either way).
   */
  async remove(sessionId: string): Promise<boolean> {
    if (!SESSION_ID.test(sessionId)) return false;
    const parts = this.partsOf(sessionId);
    await Promise.all(
      [parts.wav, parts.caller, parts.assistant, parts.building, parts.first].map((p) => rm(p, { force: true })),
    );
    try {
      return await this.store.remove(sessionId);
    } catch (err) {
      this.deps.log.warn({ err, store: this.store.kind }, 'voice recording not deleted yet; the sweep will retry');
      return false;
    }
  }

  /** Delete the recordings past their assistant's retention (one batch); how many went. */
  expire(): Promise<number> {
    return expireRecordings({ sql: this.deps.sql, log: this.deps.log, store: this.store }, async (id) => {
      const parts = this.partsOf(id);
      await Promise.all([parts.wav, parts.caller, parts.assistant, parts.building].map((p) => rm(p, { force: true })));
      await this.store.remove(id);
    });
  }

  /**
   * Abort the bucket's multipart uploads left unfinished by an instance that died mid-call or mid-upload (begun over
   * an hour ago, whose call no longer runs anywhere and is not being stored here). At start-up and by every sweep; a server that cannot list uploads is left to its lifecycle
   * rules (said once in the log).
   */
  async abortStaleUploads(): Promise<number> {
    // A call streams into its upload for as long as it runs (hours at most): never abort one whose call still runs.
    const keep = async (ids: string[]) =>
      new Set([...ids.filter((id) => this.isWriting(id)), ...(await q.activeSessionIds(this.deps.sql, ids))]);
    const result = await this.store.abortStaleUploads(new Date(Date.now() - STALE_UPLOAD_MS), keep);
    if (result === 'unsupported') {
      if (!this.saidUnsupported) this.deps.log.info('the recordings bucket does not list multipart uploads');
      this.saidUnsupported = true;
      return 0;
    }
    if (result > 0) this.deps.log.info({ aborted: result }, 'dangling recording uploads aborted');
    return result;
  }

  /**
   * Delete stored recordings whose session no longer belongs to a conversation (the conversation, assistant or
   * account was deleted) and raw tracks left by a process that died mid-call; store finished WAVs whose upload
   * failed before. Returns how many recordings and files went.
   */
  async sweep(): Promise<number> {
    let removed = await this.expire();
    await this.abortStaleUploads().catch((err: unknown) =>
      this.deps.log.warn({ err, store: this.store.kind }, 'dangling recording uploads not checked; next sweep'),
    );
    const stored = await this.store.list();
    if (stored.length > 0) {
      const linked = new Set(await q.sessionsWithConversation(this.deps.sql, stored));
      for (const id of stored) {
        if (linked.has(id) || this.isWriting(id)) continue;
        await this.store.remove(id);
        removed++;
      }
    }
    const parts = await readdir(this.partsDir).catch(() => [] as string[]);
    const partIds = [...new Set(parts.map((name) => name.split('.')[0]!).filter((id) => SESSION_ID.test(id)))].filter(
      (id) => !this.isWriting(id),
    );
    if (partIds.length === 0) {
      if (removed > 0) this.deps.log.info({ removed }, 'voice recordings swept');
      return removed;
    }
    const running = new Set(await q.activeSessionIds(this.deps.sql, partIds));
    const linked = new Set(await q.sessionsWithConversation(this.deps.sql, partIds));
    for (const name of parts) {
      const id = name.split('.')[0]!;
      if (!partIds.includes(id) || running.has(id)) continue;
      const path = join(this.partsDir, name);
      // Leave fresh files alone: a recorder on another instance sharing this directory may still be finishing.
      const info = await stat(path).catch(() => undefined);
      if (info === undefined || Date.now() - info.mtimeMs < 60_000) continue;
      if (name === `${id}${WAV_SUFFIX}` && linked.has(id)) {
        // A finished WAV the store refused earlier: try again (it stays until the store has it).
        this.uploading.add(id);
        try {
          await this.upload(id, this.deps.log, []);
        } finally {
          this.uploading.delete(id);
        }
        continue;
      }
      if (info !== undefined && Date.now() - info.mtimeMs < 10 * 60_000) continue;
      await rm(path, { force: true });
      removed++;
    }
    if (removed > 0) this.deps.log.info({ removed }, 'voice recordings swept');
    return removed;
  }
}

/**
 * Retention: delete the recordings of calls older than their assistant's `recordingRetentionDays` (one batch per
 * sweep) and mark each call, so no route lists or plays it again. A store that does not answer stops the batch; the
 * next sweep goes on. Returns how many were deleted.
 */
export async function expireRecordings(
  deps: Pick<RecordingsDeps, 'sql' | 'log'> & { store: RecordingStore },
  remove: (sessionId: string) => Promise<unknown>,
): Promise<number> {
  const due = await rq.recordingsPastRetention(deps.sql, EXPIRE_BATCH);
  let expired = 0;
  for (const id of due) {
    try {
      await remove(id);
    } catch (err) {
      deps.log.warn({ err, store: deps.store.kind }, 'voice recording retention: store not answering; next sweep');
      break;
    }
    await rq.markRecordingExpired(deps.sql, id);
    expired++;
  }
  if (expired > 0) deps.log.info({ expired }, 'voice recordings past retention deleted');
  return expired;
}

/** A conversation's recordings as the dashboard links them (for the conversation view). */
export interface RecordingLink {
  sessionId: string;
  /** GET this with the owner's dashboard session (Range supported). */
  url: string;
  /** False while the call runs or its WAV is being built (the route answers 404 until then). */
  ready: boolean;
}

/** The recordings of one conversation: sessions recorded with consent whose WAV exists (or is being written). */
export async function recordingLinksOf(
  sql: Sql,
  recordings: VoiceRecordings,
  conversationId: string,
): Promise<RecordingLink[]> {
  const sessions = await q.recordedSessionsOf(sql, conversationId);
  const links: RecordingLink[] = [];
  for (const s of sessions) {
    // A store that does not answer must not take the conversation view down with it: the recording is listed (it was
    // consented and most likely stored) and its playback answers 503 until the store is back.
    const exists = await recordings.exists(s.id).catch(() => true);
    if (!exists && !recordings.isWriting(s.id)) continue;
    links.push({ sessionId: s.id, url: `/api/assistants/${s.assistantId}/voice/recordings/${s.id}`, ready: exists });
  }
  return links;
}

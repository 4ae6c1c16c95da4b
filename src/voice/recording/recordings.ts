import { mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Sql } from '../../db/index.js';
import type { Logger } from '../../log/index.js';
import type { LiveVoiceSession } from '../session/live-session.js';
import * as q from '../queries.js';
import type { RelayTap } from '../pump/options.js';
import { SESSION_ID_PATTERN } from '../session/session-id.js';
import { CallRecorder, type RecordingPaths } from './recorder.js';

const SESSION_ID = SESSION_ID_PATTERN;
const WAV_SUFFIX = '.wav';

export interface RecordingsDeps {
  dataDir: string;
  sql: Sql;
  log: Logger;
}

/**
 * Call recordings of one instance, under `DATA_DIR/recordings/` (object storage later): `<sessionId>.wav` once a
 * call is over, the raw tracks under `.parts/` while it runs. A session is recorded only when the assistant records
 * and the caller consented (LiveVoiceSession.recorded): no consent, no file.
 *
 * A recording belongs to its conversation: when the conversation (or its assistant, or the account) is deleted,
 * the route stops serving it at once (it requires the session's conversation link) and {@link sweep} deletes the
 * file; {@link remove} deletes one right away for a capability that deletes a conversation.
 */
export class VoiceRecordings {
  readonly dir: string;
  private readonly partsDir: string;
  private readonly active = new Map<string, CallRecorder>();
  private readonly finishing = new Set<Promise<unknown>>();
  private ready = false;

  constructor(
    private readonly deps: RecordingsDeps,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.dir = resolve(deps.dataDir, 'recordings');
    this.partsDir = join(this.dir, '.parts');
  }

  /** The finished WAV of a session (whether or not it exists). */
  pathOf(sessionId: string): string {
    if (!SESSION_ID.test(sessionId)) throw new Error('not a voice session id');
    return join(this.dir, `${sessionId}${WAV_SUFFIX}`);
  }

  private partsOf(sessionId: string): RecordingPaths {
    return {
      wav: this.pathOf(sessionId),
      caller: join(this.partsDir, `${sessionId}.caller.pcm`),
      assistant: join(this.partsDir, `${sessionId}.assistant.pcm`),
      building: join(this.partsDir, `${sessionId}.wav.part`),
    };
  }

  /**
   * The relay's tap for a recorded session (created on the first media socket, kept across reconnects and
   * replacements), or undefined when the session is not recorded.
   */
  tapFor(session: LiveVoiceSession): RelayTap | undefined {
    if (!session.recorded || session.status !== 'active') return undefined;
    let recorder = this.active.get(session.id);
    if (recorder === undefined) {
      if (!this.ready) {
        mkdirSync(this.partsDir, { recursive: true, mode: 0o700 });
        this.ready = true;
      }
      recorder = new CallRecorder(session.id, this.partsOf(session.id), this.now, session.audio);
      this.active.set(session.id, recorder);
      const log = session.log;
      session.subscribe({ onEnded: () => void this.finish(session.id, log) });
    }
    return recorder.tap;
  }

  private finish(sessionId: string, log: Logger): Promise<void> {
    const recorder = this.active.get(sessionId);
    if (recorder === undefined) return Promise.resolve();
    const done = recorder
      .finish()
      .then((result) => {
        log.info(
          { recordingBytes: result?.bytes ?? 0, recordingDroppedBytes: recorder.droppedBytes },
          'voice recording written',
        );
      })
      .catch((err: unknown) => log.error({ err }, 'voice recording could not be written'))
      .finally(() => {
        this.active.delete(sessionId);
        this.finishing.delete(done);
      });
    this.finishing.add(done);
    return done;
  }

  /** Whether the recording of a session is being written right now (the call still runs, or is being finished). */
  isWriting(sessionId: string): boolean {
    return this.active.has(sessionId);
  }

  /** Wait for recordings being finished (shutdown, tests). */
  async settled(): Promise<void> {
    while (this.finishing.size > 0) await Promise.allSettled([...this.finishing]);
  }

  /** Delete a session's recording now (conversation deleted). */
  async remove(sessionId: string): Promise<void> {
    if (!SESSION_ID.test(sessionId)) return;
    const parts = this.partsOf(sessionId);
    await Promise.all([parts.wav, parts.caller, parts.assistant, parts.building].map((p) => rm(p, { force: true })));
  }

  /**
   * Delete recordings whose session no longer belongs to a conversation (the conversation, assistant or account
   * was deleted), and raw tracks left by a process that died mid-call. Returns how many files went.
   */
  async sweep(): Promise<number> {
    let removed = 0;
    const wavs = (await readdir(this.dir).catch(() => [] as string[]))
      .filter((name) => name.endsWith(WAV_SUFFIX) && SESSION_ID.test(name.slice(0, -WAV_SUFFIX.length)))
      .map((name) => name.slice(0, -WAV_SUFFIX.length));
    if (wavs.length > 0) {
      const linked = new Set(await q.sessionsWithConversation(this.deps.sql, wavs));
      for (const id of wavs) {
        if (linked.has(id) || this.active.has(id)) continue;
        await rm(this.pathOf(id), { force: true });
        removed++;
      }
    }
    const parts = await readdir(this.partsDir).catch(() => [] as string[]);
    const partIds = [
      ...new Set(parts.map((name) => name.split('.')[0]!).filter((id) => SESSION_ID.test(id) && !this.active.has(id))),
    ];
    if (partIds.length > 0) {
      const running = new Set(await q.activeSessionIds(this.deps.sql, partIds));
      for (const name of parts) {
        const id = name.split('.')[0]!;
        if (!partIds.includes(id) || running.has(id)) continue;
        const path = join(this.partsDir, name);
        // Leave fresh files alone: a recorder on another instance sharing this directory may still be finishing.
        const info = await stat(path).catch(() => undefined);
        if (info === undefined || Date.now() - info.mtimeMs < 10 * 60_000) continue;
        await rm(path, { force: true });
        removed++;
      }
    }
    if (removed > 0) this.deps.log.info({ removed }, 'voice recordings swept');
    return removed;
  }
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
    const exists = await stat(recordings.pathOf(s.id)).then(
      (i) => i.isFile(),
      () => false,
    );
    if (!exists && !recordings.isWriting(s.id)) continue;
    links.push({ sessionId: s.id, url: `/api/assistants/${s.assistantId}/voice/recordings/${s.id}`, ready: exists });
  }
  return links;
}

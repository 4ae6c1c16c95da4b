import { newKnowledgeId } from '../../assistants/index.js';
import { DEPENDENCY_UNAVAILABLE, asDependencyFailure, isAppError } from '../../errors/index.js';
import type { VoiceDelegationRequest } from '../../providers/voice/index.js';
import type { VoiceServiceDeps } from './context.js';
import { groundQuestion } from './grounding.js';
import type { LiveVoiceSession } from './live-session.js';
import * as q from '../queries.js';
import type { TranscriptTurn } from './transcripts.js';

/**
 * What a live call says, stored, and what it asks, answered: transcript turns become messages in order (one write
 * chain per session, never on the provider's hot path); delegated turns are grounded in the assistant's documents.
 */
/** Transcript turns waiting for the database, across the instance (memory bound). */
const MAX_PENDING_TURNS = 5000;
/** How long one turn is retried while the database does not answer. */
const TURN_RETRY_FOR_MS = 5 * 60_000;

export class VoiceTurns {
  private readonly writes = new Map<string, Promise<void>>();
  private pending = 0;
  private readonly lastUserMessage = new Map<string, string>();

  constructor(private readonly deps: VoiceServiceDeps) {}

  write(session: LiveVoiceSession, turn: TranscriptTurn): void {
    const id = newKnowledgeId('msg');
    const inReplyTo = turn.role === 'assistant' ? (this.lastUserMessage.get(session.id) ?? null) : null;
    if (turn.role === 'user') this.lastUserMessage.set(session.id, id);
    if (this.pending >= MAX_PENDING_TURNS) {
      // Bounded memory while the database is away: past the bound, new turns are dropped (and said so).
      session.log.error({ pending: this.pending }, 'voice transcript turn dropped: too many waiting for the database');
      return;
    }
    this.pending++;
    const row = {
      id,
      conversationId: session.conversationId,
      assistantId: session.assistant.id,
      role: turn.role,
      content: turn.text,
      inReplyTo,
      outcome: turn.outcome,
      sources: turn.sources,
      provider: `voice:${this.deps.voiceProvider?.kind ?? 'unknown'}`,
      // The local voice has no model: it quotes the documents (as the local chat answer, `local-extractive`).
      model: this.deps.voiceProvider?.kind === 'local' ? 'local-extractive' : this.deps.config.VOICE_MODEL,
    };
    const previous = this.writes.get(session.id) ?? Promise.resolve();
    const next = previous
      .then(() => this.store(row))
      .catch((err: unknown) =>
        session.log.error({ err: { message: (err as Error).message } }, 'voice transcript turn not stored'),
      )
      .finally(() => {
        this.pending--;
      });
    this.writes.set(session.id, next);
  }

  /**
   * One turn, retried while the database does not answer (writes during a call are queued, not lost),
   * for at most TURN_RETRY_FOR_MS; the insert is idempotent, so a retry after a lost answer stores it once.
   */
  private async store(row: Parameters<typeof q.insertTurn>[1]): Promise<void> {
    const giveUpAt = Date.now() + TURN_RETRY_FOR_MS;
    for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
      try {
        return await q.insertTurn(this.deps.sql, row);
      } catch (err) {
        if (asDependencyFailure(err) === undefined && !(isAppError(err) && err.code === DEPENDENCY_UNAVAILABLE))
          throw err;
        if (Date.now() + delay > giveUpAt) throw err;
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  /** The session is ending: flush its last turns, wait for them to be stored, forget it. */
  async drain(session: LiveVoiceSession): Promise<void> {
    session.transcripts.flush();
    await this.writes.get(session.id);
    this.writes.delete(session.id);
    this.lastUserMessage.delete(session.id);
  }

  /**
   * The call goes on elsewhere (taken over): forget it here once the writes already queued are done (they are the
   * dead owner's share of the transcript; the new owner writes the rest).
   */
  forget(sessionId: string): void {
    this.lastUserMessage.delete(sessionId);
    const last = this.writes.get(sessionId);
    if (last === undefined) return;
    void last.finally(() => {
      if (this.writes.get(sessionId) === last) this.writes.delete(sessionId);
    });
  }

  /** Calls with transcript state held here (tests: none is left once every call ended). */
  get size(): number {
    return new Set([...this.writes.keys(), ...this.lastUserMessage.keys()]).size;
  }

  async ground(session: LiveVoiceSession, request: VoiceDelegationRequest, question: string): Promise<void> {
    try {
      const answer = await groundQuestion(this.deps.sql, session.assistant, question);
      if (session.status !== 'active') return;
      session.provider.appendInstructions(answer.instruction, request.id);
      session.provider.appendCommentary(answer.commentary, request.id);
      session.answerReady(answer.sources, answer.outcome);
    } catch (err) {
      session.log.error({ err }, 'grounding a delegated voice turn failed');
      if (session.status !== 'active') return;
      session.provider.appendCommentary('Sorry, I cannot look that up right now.', request.id);
      session.answerReady([], 'no_answer');
    }
  }
}

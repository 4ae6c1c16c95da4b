import { newKnowledgeId } from '../assistants/index.js';
import type { VoiceDelegationRequest } from '../providers/voice/index.js';
import type { VoiceServiceDeps } from './context.js';
import { groundQuestion } from './grounding.js';
import type { LiveVoiceSession } from './live-session.js';
import * as q from './queries.js';
import type { TranscriptTurn } from './transcripts.js';

/**
 * What a live call says, stored, and what it asks, answered: transcript turns become messages in order (one write
 * chain per session, never on the provider's hot path); delegated turns are grounded in the assistant's documents.
 */
export class VoiceTurns {
  private readonly writes = new Map<string, Promise<void>>();
  private readonly lastUserMessage = new Map<string, string>();

  constructor(private readonly deps: VoiceServiceDeps) {}

  write(session: LiveVoiceSession, turn: TranscriptTurn): void {
    const id = newKnowledgeId('msg');
    const inReplyTo = turn.role === 'assistant' ? (this.lastUserMessage.get(session.id) ?? null) : null;
    if (turn.role === 'user') this.lastUserMessage.set(session.id, id);
    const previous = this.writes.get(session.id) ?? Promise.resolve();
    const next = previous.then(() =>
      q.insertTurn(this.deps.sql, {
        id,
        conversationId: session.conversationId,
        assistantId: session.assistant.id,
        role: turn.role,
        content: turn.text,
        inReplyTo,
        outcome: turn.outcome,
        sources: turn.sources,
        provider: `voice:${this.deps.voiceProvider?.kind ?? 'unknown'}`,
        model: this.deps.config.VOICE_MODEL,
      }).catch((err: unknown) => session.log.error({ err }, 'voice transcript turn not stored')),
    );
    this.writes.set(session.id, next);
  }

  /** The session is ending: flush its last turns, wait for them to be stored, forget it. */
  async drain(session: LiveVoiceSession): Promise<void> {
    session.transcripts.flush();
    await this.writes.get(session.id);
    this.writes.delete(session.id);
    this.lastUserMessage.delete(session.id);
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

import { newKnowledgeId, type Assistant } from '../../assistants/index.js';
import { isVisitorsOwnConversation } from '../../conversations/index.js';
import { AppError } from '../../errors/index.js';
import { voiceErrors } from '../errors.js';
import * as q from '../queries.js';
import type { TurnObserver } from '../timeline/turn-clock.js';
import type { VoiceContext } from './context.js';

/** What a mint settles besides admission: the conversation, the instructions, the public base URL, the turn observer. */

/** Continue a conversation of this assistant (keyless: only the same visitor's), or start a new one. */
export async function resolveConversation(
  ctx: VoiceContext,
  conversationId: string | undefined,
  assistant: Assistant,
  keyless: boolean,
  visitorId: string | null,
): Promise<string> {
  if (conversationId === undefined) return newKnowledgeId('conv');
  const found = await q.findConversation(ctx.deps.sql, conversationId, assistant.id);
  if (found === undefined || (keyless && !isVisitorsOwnConversation(found, visitorId))) {
    throw new AppError('VOICE_CONVERSATION_NOT_FOUND', 404, 'No such conversation.');
  }
  return found.id;
}

/** The provider's instructions for a live call: the owner's, then how to speak and when to delegate. */
export function instructionsFor(assistant: Assistant): string {
  const base = assistant.instructions ?? '';
  return (
    `${base}\n\nYou are speaking with a caller on a live voice call. Keep answers short and spoken. ` +
    "For any question about facts, products, policies or anything the owner's documents may cover, delegate the turn " +
    'and answer only from what you are given back.'
  );
}

/** One host name or IP literal with an optional port: what a single, honest Host header holds (RFC 9110, 7.2). */
const HOST_HEADER =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * PUBLIC_URL when set (the operator's word); else the request's Host, validated, under the scheme the client used (a
 * trusted proxy's `X-Forwarded-Proto`, else plain HTTP); else this listener's address.
 */
export function publicBaseOf(ctx: VoiceContext, host: string | undefined, forwardedProto: string | undefined): URL {
  const { config } = ctx.deps;
  if (config.PUBLIC_URL !== undefined) return new URL(config.PUBLIC_URL);
  if (host === undefined) return new URL(`http://${config.HOST}:${config.PORT}`);
  if (host.length > 255 || !HOST_HEADER.test(host)) throw voiceErrors.hostInvalid();
  const proto = config.TRUST_PROXY ? forwardedProto?.split(',')[0]?.trim().toLowerCase() : undefined;
  try {
    return new URL(`${proto === 'https' ? 'https' : 'http'}://${host}`);
  } catch {
    throw voiceErrors.hostInvalid();
  }
}

/** The metrics' view of a call's turns (none without an observer that takes them). */
export function turnObserverOf(ctx: VoiceContext): TurnObserver | undefined {
  const observer = ctx.observer;
  if (observer?.turn === undefined) return undefined;
  return { turn: (latencyMs, firstAudioMs) => observer.turn?.(latencyMs, firstAudioMs) };
}

import { randomUUID } from 'node:crypto';
import type { Sql } from '../../src/db/index.js';
import { insertConversation, insertTurn } from '../../src/voice/queries.js';

/**
 * Writes voice calls of an assistant as the voice capability stores them: a conversation of source api, then its
 * turns in order, each assistant turn an answer to the caller's question before it. Returns the conversation's id.
 */
export function voiceCallWriter(
  sql: Sql,
  owner: { accountId: string },
  assistant: { id: string },
): (turns: Array<'user' | 'assistant'>) => Promise<string> {
  return async (turns) => {
    const id = `conv_${randomUUID()}`;
    await insertConversation(sql, {
      id,
      assistantId: assistant.id,
      accountId: owner.accountId,
      visitorId: null,
      source: 'api',
    });
    let lastUser: string | null = null;
    for (const role of turns) {
      const messageId = `msg_${randomUUID()}`;
      await insertTurn(sql, {
        id: messageId,
        conversationId: id,
        assistantId: assistant.id,
        role,
        content: role === 'user' ? 'How much is the premium plan?' : 'The premium plan costs 4.99 euros.',
        inReplyTo: role === 'assistant' ? lastUser : null,
        outcome: role === 'assistant' ? 'answered' : null,
        sources: [],
        provider: 'voice:local',
        model: null,
      });
      if (role === 'user') lastUser = messageId;
    }
    return id;
  };
}

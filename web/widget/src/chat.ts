import { streamChat, type ParleyClient } from '@parley/sdk';
import { decorateAnswer, visitorText } from './answer.js';
import type { Source } from './config.js';
import { h } from './dom.js';
import { describeError } from './errors.js';
import { errorMessages } from './messages.js';

/** What a chat turn needs from the element: the API, the conversation log, and its events and errors. */
export interface ChatHost {
  client(): ParleyClient;
  readonly log: HTMLElement;
  scrollLog(): void;
  emit(type: string, detail: unknown): void;
  fail(code: string, message: string): void;
  /** Who rates an answer (read when the visitor clicks). */
  visitorId(): string;
  /** The answer names its conversation (the next turn continues it). */
  conversation(conversationId: string): void;
}

export interface ChatTurn {
  assistantId: string;
  message: string;
  visitorId: string;
  source: Source;
  conversationId: string | undefined;
  /** The last voice call ended for a usage reason: the assistant may say, neutrally, why the voice ended. */
  voiceUnavailable: boolean;
}

/**
 * Streams one answer into the log: the bubble appears with the first token, grows as tokens arrive, and gets its
 * sources and feedback buttons when the answer is complete. Failures are shown in the log, never thrown.
 */
export async function streamAnswer(host: ChatHost, turn: ChatTurn): Promise<void> {
  const bubble = h('div', { class: 'msg assistant', 'aria-busy': 'true' });
  // A tool's progress while it runs ("Checking your order..."): one status line, gone when the tool is done.
  const progress = h('div', { class: 'notice tool', role: 'status' });
  let answer = '';
  const place = () => bubble.isConnected || host.log.append(bubble);
  try {
    for await (const event of streamChat(host.client(), {
      assistantId: turn.assistantId,
      message: turn.message,
      visitorId: turn.visitorId,
      source: turn.source,
      ...(turn.conversationId !== undefined ? { conversationId: turn.conversationId } : {}),
      ...(turn.voiceUnavailable ? { voiceUnavailable: true } : {}),
    })) {
      if (event.type === 'token') {
        answer += event.text;
        place();
        bubble.textContent = visitorText(answer);
        host.scrollLog();
        host.emit('parley:message', { role: 'assistant', text: visitorText(answer), final: false });
      } else if (event.type === 'meta') {
        host.conversation(event.conversationId);
        place();
        bubble.textContent = visitorText(answer, true);
        decorateAnswer(bubble, event.sources, (rating) => {
          host
            .client()
            .POST('/api/v1/feedback', { body: { messageId: event.messageId, rating, visitorId: host.visitorId() } })
            .catch((err: unknown) => host.fail(...describeError(err)));
        });
        host.scrollLog();
        host.emit('parley:message', { role: 'assistant', text: visitorText(answer, true), final: true });
      } else if (event.type === 'tool') {
        if (event.status === 'started') {
          progress.textContent = event.message ?? 'Working on it…';
          host.log.append(progress);
          host.scrollLog();
        } else progress.remove();
      } else if (event.type === 'error') {
        host.fail(event.code, errorMessages.interrupted);
      }
    }
  } catch (err) {
    host.fail(...describeError(err));
  } finally {
    progress.remove();
    bubble.removeAttribute('aria-busy');
  }
}

import { AppError } from '../errors/index.js';
import type { ChatProviderError } from '../providers/chat/index.js';

/** The chat capability's error codes. */
export const ChatErrorCodes = {
  /** 404: conversationId does not name a conversation of this assistant (and visitor). */
  CONVERSATION_NOT_FOUND: 'CHAT_CONVERSATION_NOT_FOUND',
  /** 503: the selected provider (deployment CHAT_PROVIDER or the assistant's settings.chatProvider) is not configured. */
  PROVIDER_NOT_CONFIGURED: 'CHAT_PROVIDER_NOT_CONFIGURED',
  /** 504: the provider did not answer within OPENAI_TIMEOUT_MS (after the retries). */
  PROVIDER_TIMEOUT: 'CHAT_PROVIDER_TIMEOUT',
  /** 502: the provider failed (refused, unavailable, rate-limited, unreachable) before the answer began. */
  PROVIDER_FAILED: 'CHAT_PROVIDER_FAILED',
  /** SSE `error` event: the provider stream broke after the answer began. */
  STREAM_INTERRUPTED: 'CHAT_STREAM_INTERRUPTED',
} as const;

export const chatErrors = {
  conversationNotFound: () =>
    new AppError(ChatErrorCodes.CONVERSATION_NOT_FOUND, 404, 'No such conversation for this assistant.'),
  providerNotConfigured: (name: string) =>
    new AppError(
      ChatErrorCodes.PROVIDER_NOT_CONFIGURED,
      503,
      `The chat provider "${name}" is not configured on this deployment.`,
    ),
  /** Upstream failure before the answer began; details say what kind, never the upstream's words. */
  fromProvider: (err: ChatProviderError) =>
    err.failure === 'timeout'
      ? new AppError(ChatErrorCodes.PROVIDER_TIMEOUT, 504, 'The AI provider did not answer in time.', {
          details: { failure: err.failure },
        })
      : new AppError(ChatErrorCodes.PROVIDER_FAILED, 502, 'The AI provider could not answer right now.', {
          details: { failure: err.failure },
        }),
};

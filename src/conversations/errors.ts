import { AppError } from '../errors/index.js';

/** The conversations capability's error codes. */
export const ConversationErrorCodes = {
  /** 404: no such conversation for this caller (another account's is also 404). */
  NOT_FOUND: 'CONVERSATION_NOT_FOUND',
} as const;

export const conversationErrors = {
  notFound: () => new AppError(ConversationErrorCodes.NOT_FOUND, 404, 'No such conversation.'),
};

import { AppError } from '../errors/index.js';

/** The conversations capability's error codes. */
export const ConversationErrorCodes = {
  /** 404: no such conversation for this caller (another account's is also 404). */
  NOT_FOUND: 'CONVERSATION_NOT_FOUND',
  /** 409: a voice call of it still runs; end the call, then delete. */
  CALL_ACTIVE: 'CONVERSATION_CALL_ACTIVE',
  /** 400: filters that cannot both hold (scoreMin above scoreMax); details.field names the one to change. */
  FILTER_INVALID: 'CONVERSATION_FILTER_INVALID',
} as const;

export const conversationErrors = {
  notFound: () => new AppError(ConversationErrorCodes.NOT_FOUND, 404, 'No such conversation.'),
  callActive: () =>
    new AppError(
      ConversationErrorCodes.CALL_ACTIVE,
      409,
      'A voice call of this conversation is still running. End the call, then delete.',
    ),
  filterInvalid: (field: string, message: string) =>
    new AppError(ConversationErrorCodes.FILTER_INVALID, 400, message, { details: { field } }),
};

import { AppError } from '../errors/index.js';

/** The assistants capability's error codes (stable; documented in the errors index). */
export const AssistantErrorCodes = {
  /** 404: no such assistant for this caller. Another account's assistant is also 404, never 403. */
  NOT_FOUND: 'ASSISTANT_NOT_FOUND',
} as const;

export const assistantErrors = {
  notFound: () => new AppError(AssistantErrorCodes.NOT_FOUND, 404, 'No such assistant.'),
};

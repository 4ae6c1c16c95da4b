import { AppError } from '../errors/index.js';

/** The analysis capability's error codes (stable; listed in docs/api.md). */
export const AnalysisErrorCodes = {
  /** 404: no such conversation for this caller (another account's is also 404). */
  CONVERSATION_NOT_FOUND: 'ANALYSIS_CONVERSATION_NOT_FOUND',
  /** 409: the conversation's assistant has no analysis step turned on (settings.analysis). */
  NOT_ENABLED: 'ANALYSIS_NOT_ENABLED',
} as const;

export const analysisErrors = {
  conversationNotFound: () => new AppError(AnalysisErrorCodes.CONVERSATION_NOT_FOUND, 404, 'No such conversation.'),
  notEnabled: () =>
    new AppError(
      AnalysisErrorCodes.NOT_ENABLED,
      409,
      "The assistant's analysis has no step turned on: enable summary, structuredData, successEvaluation or sentiment in its settings.",
    ),
};

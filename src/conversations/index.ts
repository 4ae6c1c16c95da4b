/** Conversations: stored exchanges (chat and voice write them), owner list/get, feedback targets. */
export { conversationRoutes, type ConversationRouteDeps } from './routes.js';
export { sourceSchema } from './schemas.js';
export {
  recordExchange,
  findContinuableConversation,
  isVisitorsOwnConversation,
  recentMessages,
  findFeedbackTarget,
  upsertFeedback,
  type Exchange,
} from './service.js';
export { ConversationErrorCodes } from './errors.js';
export type { ConversationSource, Outcome, StoredSource } from './queries.js';

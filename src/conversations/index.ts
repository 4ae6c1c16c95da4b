/** Conversations: stored exchanges (chat and voice write them), owner list/get, feedback targets. */
export { conversationRoutes } from './routes.js';
export { sourceSchema, dateParam } from './schemas.js';
export {
  recordExchange,
  findContinuableConversation,
  isVisitorsOwnConversation,
  recentMessages,
  findFeedbackTarget,
  upsertFeedback,
} from './service.js';
export type { ConversationSource, Outcome, StoredSource } from './queries.js';
export { maskCallerNumber } from './owner-service.js';
export { recordToolItems, completeToolItem, type ToolItem } from './tool-items.js';
/** The analysis verdict as pass or fail, as SQL over `conversation_analyses a` (the list filter and the analytics). */
export { SUCCESS_SQL } from './list-queries.js';

/** Assistants: owner CRUD, the two ids, settings (security policy, voice, language). */
export { assistantRoutes } from './routes.js';
export {
  getOwnedAssistant,
  getAssistantByPublicId,
  getAssistantById,
  presentAssistant,
  createAssistant,
  type Assistant,
} from './service.js';
export { AssistantErrorCodes, assistantErrors } from './errors.js';
export { newKnowledgeId, hasIdShape, isPublicAssistantId, isInternalAssistantId } from './ids.js';
export { pageQuerySchema, decodeCursor, encodeCursor, pageOf, type PageCursor } from './pagination.js';
export { assistantIdParam } from './schemas.js';
export { DEFAULT_SETTINGS, SEARCH_LANGUAGES, type AssistantSettings, type SearchLanguage } from './settings.js';

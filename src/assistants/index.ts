/** Assistants: owner CRUD, the two ids, settings (security policy, voice, language). */
export { assistantRoutes } from './routes.js';
export {
  getOwnedAssistant,
  getAssistantByPublicId,
  getAssistantById,
  createAssistant,
  type Assistant,
} from './service.js';
export { newKnowledgeId, hasIdShape } from './ids.js';
export { pageQuerySchema, decodeCursor, encodeCursor, pageOf, type PageCursor } from './pagination.js';
export { assistantIdParam } from './schemas.js';

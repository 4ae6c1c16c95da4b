/** Retrieval: ranked Postgres full-text search over an assistant's passages (same SQL on the embedded database). */
export { retrievePassages, snippetOf, sourcesOf, planQuery, type Passage, type PassageSource } from './service.js';
export { lockAssistantTerms, addDocumentTerms, removeDocumentTerms, rebuildAssistantTerms } from './queries.js';

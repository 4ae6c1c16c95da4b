/** Retrieval: ranked Postgres full-text search over an assistant's passages (same SQL on the embedded database). */
export {
  retrievePassages,
  snippetOf,
  sourcesOf,
  questionWords,
  planQuery,
  quoteLexeme,
  MAX_QUERY_WORDS,
  CANDIDATE_BUDGET,
  type Passage,
  type PassageSource,
  type QueryPlan,
} from './service.js';
export { lockAssistantTerms, addDocumentTerms, removeDocumentTerms, rebuildAssistantTerms } from './queries.js';

/**
 * Retrieval has no error answers of its own: a question that matches nothing is an empty result (the
 * chat capability answers `no_answer`), and database failures are 500s. Kept for the capability layout.
 */
export const RetrievalErrorCodes = {} as const;

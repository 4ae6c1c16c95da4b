/** Chat: POST /api/v1/chat (Bearer or keyless), retrieval-grounded answers from the configured provider, JSON or SSE. */
export { chatRoutes } from './routes.js';
export { chatMeterFrom } from './meter.js';
/** The chat prompt and retrieval depth, shared with evals (which run each case like a chat turn). */
export { buildMessages } from './prompt.js';
export { TOP_K } from './service.js';
/** One chat turn run in-process (scenario runs drive chat through the same service, as source `test`). */
export { prepareChat, runChat, type ChatDeps, type ChatResult } from './service.js';

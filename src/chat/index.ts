/** Chat: POST /api/v1/chat (Bearer or keyless), retrieval-grounded answers from the configured provider, JSON or SSE. */
export { chatRoutes, chatBodySchema, chatAnswerSchema } from './routes.js';
export { prepareChat, runChat, type ChatDeps, type ChatBody, type ChatResult } from './service.js';
export {
  unmeteredChat,
  chatMeterFrom,
  type ChatMeter,
  type ChatReservation,
  type ChatUsage,
  type ChatAdmitRequest,
} from './meter.js';
export { ChatErrorCodes } from './errors.js';
/** The chat prompt and retrieval depth, shared with evals (which run each case like a chat turn). */
export { buildMessages } from './prompt.js';
export { TOP_K } from './service.js';

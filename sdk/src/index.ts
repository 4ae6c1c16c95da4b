/**
 * @parley/sdk: the contract's types (generated from Parley's OpenAPI document), a typed fetch client, chat
 * streaming and the voice client. Browser-safe: fetch and WebSocket only, no Node built-ins.
 *
 *   import { createParleyClient, ParleyError } from '@parley/sdk';
 *   const parley = createParleyClient({ baseUrl: 'https://parley.example.com', apiKey: process.env.PARLEY_API_KEY });
 *   const assistants = await parley.GET('/api/v1/assistants');
 */
export {
  createParleyClient,
  buildUrl,
  deprecationOf,
  type ParleyClient,
  type ParleyClientOptions,
  type RetryOptions,
  type DeprecationNotice,
} from './client.js';
export { ParleyError, parseRetryAfter, errorFromAnswer, networkError } from './errors.js';
export { streamChat, type ChatRequest, type ChatAnswer, type ChatStreamEvent } from './chat.js';
export { uploadDocument, type UploadDocumentInput, type UploadedDocument } from './documents.js';
export * from './voice/index.js';
export {
  getVoiceTimeline,
  getVoiceLatency,
  latencyByOwner,
  type VoiceTimeline,
  type VoiceTimelineTurn,
  type VoiceTimelineEvent,
  type VoiceLatency,
} from './timeline.js';
export { readNdjson, readSse, type ServerSentEvent } from './streams.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type ParleyWebhookEvent,
  type ParleyWebhookEventType,
  type VerifyWebhookOptions,
  type WebhookHeaders,
} from './webhooks.js';
export {
  verifyToolCall,
  toolReceiver,
  type Tool,
  type ToolCall,
  type ToolCallItem,
  type ToolAnswer,
  type ToolHandlers,
} from './tools.js';
export type {
  paths,
  operations,
  components,
  HttpMethod,
  PathsWith,
  Operation,
  RequestBody,
  SuccessBody,
  RequestOptions,
  CallOptions,
} from './types.js';

/** The API version prefix this SDK was generated against. */
export const API_PREFIX = '/api/v1';

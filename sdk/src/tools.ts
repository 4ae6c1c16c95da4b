/**
 * Server tools: what Parley POSTs to a tool's URL when an assistant calls it, a check of its Standard Webhooks
 * signature (the assistant's tool secret), and a small typed receiver. WebCrypto only (Node 20, browsers, edge).
 *
 *   import { toolReceiver } from '@parley/sdk';
 *   const receive = toolReceiver(process.env.PARLEY_TOOL_SECRET!, {
 *     order_status: async (args) => ({ status: await lookUp(String(args.orderId)) }),
 *   });
 *   const { status, body } = await receive(req.headers, rawBody); // then answer status + JSON body
 */
import type { components } from './generated/openapi.js';
import { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders } from './webhooks.js';

/** A tool as the API answers it (GET /api/v1/assistants/{assistantId}/tools). */
export type Tool = components['schemas']['Tool'];
/** A tool call as a conversation item (role `tool`) in GET /api/v1/conversations/{conversationId}. */
export type ToolCallItem = components['schemas']['ToolCallItem'];

/** The body of a tool call request. `webhook-id` is `toolCallId`: deduplicate on it (an async tool may be retried). */
export interface ToolCall<Args = Record<string, unknown>> {
  type: 'tool.call';
  toolCallId: string;
  /** The tool's name. */
  tool: string;
  /** Checked against the tool's JSON Schema before the request was made. */
  arguments: Args;
  call: {
    sessionId?: string;
    conversationId: string;
    /** The assistant's internal id. */
    assistantId: string;
    source: string;
    transport?: string;
  };
  /** The last few turns of the conversation. */
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}

/** What a tool answers (2xx JSON, at most 64 KB): a result the assistant states, or an error it is told about. */
export type ToolAnswer = { result: unknown } | { error: string };

/**
 * Checks a tool call's signature (any `v1,` entry made with `secret`, `whsec_...`; during a rotation the request
 * carries one per secret) and that its timestamp is recent, then returns the parsed call. Pass the body exactly as
 * received. Throws {@link WebhookVerificationError} otherwise.
 */
export async function verifyToolCall<Args = Record<string, unknown>>(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<ToolCall<Args>> {
  const parsed = (await verifyWebhook(secret, headers, body, options)) as unknown as ToolCall<Args>;
  if (parsed?.type !== 'tool.call') throw new WebhookVerificationError('Not a tool call.');
  return parsed;
}

/** One handler per tool name: its arguments and the call in, any JSON result out (a throw answers `{ error }`). */
export type ToolHandlers = Record<string, (args: Record<string, unknown>, call: ToolCall) => unknown>;

/**
 * A receiver for several tools: verifies the request, runs the handler the call names and says what to answer
 * (401 for a bad signature, 404 for an unknown tool, 200 with `{ result }` or `{ error }` otherwise).
 */
export function toolReceiver(secret: string, handlers: ToolHandlers, options: VerifyWebhookOptions = {}) {
  return async (headers: WebhookHeaders, body: string | Uint8Array): Promise<{ status: number; body: ToolAnswer }> => {
    let call: ToolCall;
    try {
      call = await verifyToolCall(secret, headers, body, options);
    } catch {
      return { status: 401, body: { error: 'invalid signature' } };
    }
    const handler = Object.hasOwn(handlers, call.tool) ? handlers[call.tool] : undefined;
    if (!handler) return { status: 404, body: { error: `no tool named ${call.tool}` } };
    try {
      return { status: 200, body: { result: await handler(call.arguments, call) } };
    } catch (err) {
      return { status: 200, body: { error: err instanceof Error ? err.message : String(err) } };
    }
  };
}

/**
 * Every call the dashboard makes. v1 routes go through the SDK's typed client (types generated from the OpenAPI
 * document); the few dashboard-only routes (not in the v1 document) are typed in ./dashboard-routes.ts. The session
 * cookie rides along (same origin), so no key ever lives in page script.
 */
import { createParleyClient, ParleyError, streamChat, type Operation, type SuccessBody } from '@parley/sdk';

type Listener = () => void;
const expiryListeners = new Set<Listener>();

/** Called when any call answers 401 AUTH_SESSION_REQUIRED-like (the session ended): the app goes to sign-in. */
export function onSessionExpired(listener: Listener): () => void {
  expiryListeners.add(listener);
  return () => expiryListeners.delete(listener);
}

/** fetch, plus: a 401 from anything but the sign-in routes means the session is gone. */
export const sessionFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, { credentials: 'same-origin', ...init });
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (res.status === 401 && !/\/api\/auth\/(login|signup|me)\b/.test(url)) for (const l of expiryListeners) l();
  return res;
};

export const v1 = createParleyClient({ baseUrl: '', fetch: sessionFetch, onDeprecation: () => undefined });
export { ParleyError, streamChat };

type Body<P extends Parameters<typeof v1.GET>[0], M extends 'get' | 'post' | 'patch'> = SuccessBody<Operation<P, M>>;

export type Assistant = Body<'/api/v1/assistants/{assistantId}', 'get'>['assistant'];
export type AssistantSettings = Assistant['settings'];
export type AssistantPatch = NonNullable<
  Operation<'/api/v1/assistants/{assistantId}', 'patch'>['requestBody']
>['content']['application/json'];
export type DocumentRecord = Body<'/api/v1/documents/{documentId}', 'get'>['document'];
export type Conversation = Body<'/api/v1/conversations/{conversationId}', 'get'>['conversation'];
export type ConversationDetail = Body<'/api/v1/conversations/{conversationId}', 'get'>;
export type Message = ConversationDetail['messages'][number];
export type Analytics = Body<'/api/v1/analytics', 'get'>;
export type Tool = Body<'/api/v1/assistants/{assistantId}/tools/{toolId}', 'get'>['tool'];
export type ToolTestResult = SuccessBody<Operation<'/api/v1/assistants/{assistantId}/tools/{toolId}/test', 'post'>>;
export type ChatSource = Message['sources'][number];

/** A readable line for any failure: the server's sentence, its code and the request id to quote. */
export function describeError(err: unknown): { message: string; code?: string; requestId?: string; status?: number } {
  if (err instanceof ParleyError) {
    return {
      message: err.status === 0 ? 'The server could not be reached. Check your connection and try again.' : err.message,
      code: err.code,
      ...(err.requestId !== undefined ? { requestId: err.requestId } : {}),
      status: err.status,
    };
  }
  return { message: err instanceof Error ? err.message : String(err) };
}

/** The owner's day across assistants (GET /api/v1/overview) and one row of the call log (GET /api/v1/call-log). */
export type Overview = Body<'/api/v1/overview', 'get'>;
export type CallLogEntry = Body<'/api/v1/call-log', 'get'>['calls'][number];

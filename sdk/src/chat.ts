/**
 * POST /api/v1/chat as a stream of events (`accept: text/event-stream`): `token` pieces of the answer, then `meta`
 * (ids, sources, outcome), then `done`. A provider failure after the stream began arrives as `error` then `done`.
 */
import type { ParleyClient } from './client.js';
import type { CallOptions, Operation, RequestBody, SuccessBody } from './types.js';
import type { components } from './generated/openapi.js';
import { readSse } from './streams.js';

type ChatOperation = Operation<'/api/v1/chat', 'post'>;
export type ChatRequest = RequestBody<ChatOperation>;
export type ChatAnswer = SuccessBody<ChatOperation>;

/** One event of the SSE answer as the contract documents it (`event:` name and `data:` JSON). */
export type ChatServerSentEvent = components['schemas']['ChatStreamEvent'];
/** The same, flattened: `{ type: event, ...data }`, e.g. `{ type: 'token', text }`. */
export type ChatStreamEvent = ChatServerSentEvent extends infer E
  ? E extends { event: infer T; data: infer D }
    ? { type: T } & D
    : never
  : never;

/** Streams one chat answer. Refusals before the stream began (4xx/5xx) throw ParleyError like any call. */
export async function* streamChat(
  client: ParleyClient,
  body: ChatRequest,
  options: CallOptions = {},
): AsyncGenerator<ChatStreamEvent> {
  const res = await client.stream('post', '/api/v1/chat', {
    body,
    ...(options.signal ? { signal: options.signal } : {}),
    headers: { ...options.headers, accept: 'text/event-stream' },
  });
  if (res.body === null) return;
  for await (const event of readSse(res.body)) {
    const data = event.data === '' ? {} : (JSON.parse(event.data) as Record<string, unknown>);
    yield { ...data, type: event.event } as ChatStreamEvent;
    if (event.event === 'done') return;
  }
}

import { z } from 'zod';
import { principalOf } from '../auth/principal.js';
import { sourceSchema } from '../conversations/index.js';
import { defineRoute, reply, sseEvent, type AnyRoute } from '../http/index.js';
import { ChatErrorCodes, chatErrors } from './errors.js';
import * as service from './service.js';
import { TextQueue } from './text-queue.js';
import { ToolEventTrack } from './tool-sse.js';

export const chatBodySchema = z
  .object({
    assistantId: z
      .string()
      .min(1)
      .max(100)
      .describe('Keyless callers: the public asst_ id. Bearer callers: either id of an assistant the key owns.'),
    message: z.string().trim().min(1).max(4000),
    conversationId: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe('Continue this conversation (same assistant, and for keyless callers the same visitor).'),
    visitorId: z
      .string()
      .min(8)
      .max(80)
      .regex(/^[A-Za-z0-9._:-]+$/)
      .optional(),
    history: z
      .array(z.object({ role: z.enum(['user', 'assistant']), content: z.string().max(4000) }).strict())
      .max(40)
      .optional()
      .describe(
        'Earlier turns for a new conversation (ignored when conversationId is given: the stored messages are used).',
      ),
    source: z
      .enum(['api', 'widget', 'playground'])
      .optional()
      .describe(
        "playground is granted only to the assistant owner's signed-in dashboard session (same origin); keyless callers are always widget and Bearer callers always api, whatever they ask.",
      ),
    voiceUnavailable: z
      .boolean()
      .optional()
      .describe(
        'Sent by the widget after a voice session ended for a usage reason: the answer says neutrally that voice has ended. Carries no reason; not stored.',
      ),
  })
  .strict();

const outcomeSchema = z.enum(['answered', 'no_answer', 'model_failure']);

export const chatAnswerSchema = z
  .object({
    messageId: z.string(),
    conversationId: z.string(),
    answer: z.string(),
    sources: z.array(sourceSchema),
    outcome: outcomeSchema,
  })
  .meta({ id: 'ChatAnswer' });

/** Documentation of the SSE answer (OpenAPI only): each event's `event:` line and its `data:` JSON. */
export const chatStreamEventSchema = z
  .union([
    z.object({
      event: z.literal('token'),
      data: z.object({ text: z.string().describe('The next piece of the answer.') }),
    }),
    z.object({
      event: z.literal('tool'),
      data: z
        .object({
          toolCallId: z.string(),
          name: z.string(),
          status: z.enum(['started', 'succeeded', 'failed', 'async']),
          message: z.string().optional().describe("The tool's start (or failed) message, when its owner gave one."),
        })
        .describe('A server tool the answer uses: started, then succeeded or failed (async: accepted, result later).'),
    }),
    z.object({
      event: z.literal('meta'),
      data: z.object({
        messageId: z.string(),
        conversationId: z.string(),
        sources: z.array(sourceSchema),
        outcome: outcomeSchema,
      }),
    }),
    z.object({
      event: z.literal('error'),
      data: z
        .object({ code: z.string(), message: z.string() })
        .describe('A failure after the stream began; done follows.'),
    }),
    z.object({ event: z.literal('done'), data: z.object({}) }),
  ])
  .meta({
    id: 'ChatStreamEvent',
    description:
      'One Server-Sent Event of a streamed answer: `event: <event>` then `data: <data as JSON>`. Order: token and tool events, then meta (or error), then done.',
  });

/** POST /api/v1/chat: Bearer key with `chat` scope, or keyless (public id, widget policy). JSON or SSE. */
export function chatRoutes(deps: service.ChatDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/chat',
      auth: 'bearer-or-keyless',
      scope: 'chat',
      cors: true,
      bodyLimit: 256 * 1024,
      schemas: { body: chatBodySchema, response: { 200: chatAnswerSchema } },
      openapi: {
        summary: 'Answer a message for one assistant',
        description:
          'With `Accept: text/event-stream` the answer streams as SSE: `token {text}` events (and `tool {toolCallId, name, status}` events while a server tool runs), then `meta {messageId, conversationId, sources, outcome}`, ' +
          'then `done`. A provider failure after the stream began is an `error {code, message}` event followed by `done`. Otherwise JSON.',
        tags: ['Chat'],
        errors: {
          400: 'Invalid body',
          401: 'Invalid API key (keyless callers send no Authorization header)',
          402: "Bearer callers: reason usage_limit, the billing period's budget or request cap is used up (details say which).",
          403: 'Missing chat scope; keyless: Origin not allowed, visitor signature missing or invalid, or the assistant cannot answer right now (no reason given)',
          404: 'No such assistant (keyless callers must use the public asst_ id) or conversation',
          429: 'Rate limit (plain, with Retry-After)',
          502: 'The AI provider failed before answering',
          503: 'The selected AI provider is not configured, or the service is busy (SERVICE_OVERLOADED, with Retry-After)',
          504: 'The AI provider did not answer in time',
        },
        contentTypes: { 200: 'application/json' },
        alternateContent: { 200: { 'text/event-stream': chatStreamEventSchema } },
        responseDescriptions: {
          200: 'The answer as JSON, or with `Accept: text/event-stream` as Server-Sent Events (each event matches ChatStreamEvent).',
        },
      },
      handler: async (ctx) => {
        const principal = principalOf(ctx);
        // A slot before any query: past the instance's capacity the request waits in its tenant's queue or is
        // refused 503 with Retry-After, never holding a pooled connection while it waits.
        const tenant =
          principal.kind === 'keyless' ? `assistant:${ctx.body.assistantId}` : `account:${principal.accountId}`;
        const release = deps.admission ? await deps.admission.acquire(tenant, ctx.signal) : () => undefined;
        let running: Promise<service.ChatResult> | undefined;
        try {
          const prepared = await service.prepareChat(deps, principal, ctx, ctx.body);
          const wantsStream = /\btext\/event-stream\b/i.test(ctx.headers['accept'] ?? '');
          if (!wantsStream) {
            const result = await service.runChat(deps, prepared, { signal: ctx.signal });
            if (result.error) throw chatErrors.fromProvider(result.error);
            return reply.json({
              messageId: result.messageId,
              conversationId: result.conversationId,
              answer: result.answer,
              sources: result.sources,
              outcome: result.outcome,
            });
          }
          const queue = new TextQueue();
          const tools = new ToolEventTrack();
          const turn = service.runChat(deps, prepared, {
            signal: ctx.signal,
            onText: (t) => {
              tools.noteText(t);
              queue.push(t);
            },
            onTool: (progress) => {
              tools.add(progress);
              queue.push('');
            },
          });
          running = turn;
          turn.then(
            () => queue.close(),
            () => queue.close(),
          );
          // Commit to a 200 stream only once the answer has begun: a failure before that is a proper HTTP error.
          if (!(await queue.first())) {
            const result = await turn;
            if (result.error) throw chatErrors.fromProvider(result.error);
          }
          return reply.sse(async (sink) => {
            writing: for await (const text of queue) {
              for (const item of tools.interleave(text))
                if (!(await sink.write(sseEvent(item.event, item.data)))) break writing;
            }
            for (const item of tools.rest()) await sink.write(sseEvent(item.event, item.data));
            let result: service.ChatResult;
            try {
              result = await turn;
            } catch (err) {
              ctx.log.error({ err }, 'chat failed after the stream began');
              await sink.write(
                sseEvent('error', { code: 'INTERNAL_ERROR', message: 'Something went wrong on our side.' }),
              );
              await sink.write(sseEvent('done', {}));
              return;
            }
            if (result.error) {
              await sink.write(
                sseEvent('error', {
                  code: ChatErrorCodes.STREAM_INTERRUPTED,
                  message: 'The answer was interrupted; please ask again.',
                }),
              );
            } else {
              await sink.write(
                sseEvent('meta', {
                  messageId: result.messageId,
                  conversationId: result.conversationId,
                  sources: result.sources,
                  outcome: result.outcome,
                }),
              );
            }
            await sink.write(sseEvent('done', {}));
          });
        } finally {
          // A streamed answer holds its slot until the turn is stored; anything else (a refusal included) frees it now.
          if (running !== undefined) void running.then(release, release);
          else release();
        }
      },
    }),
  ];
}

import { z } from 'zod';
import { assistantIdParam } from '../assistants/index.js';
import { ownerOf } from '../auth/principal.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import * as service from './service.js';

const tags = ['Widget'];
const visitorId = z
  .string()
  .min(8)
  .max(80)
  .regex(/^[A-Za-z0-9._:-]+$/, 'letters, digits and . _ : - only');
const policyErrors = {
  403: 'Origin not allowed, or the visitor signature is missing or invalid',
  404: 'No such assistant',
  429: 'Widget rate limit (plain, with Retry-After)',
};

/** Keyless widget routes, behind the assistant's security policy (Origin -> rate limits -> signature). */
export function widgetRoutes(deps: service.WidgetDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/v1/widget/:publicId/config',
      auth: 'none',
      cors: true,
      schemas: {
        params: z.object({ publicId: z.string().min(1).max(100).describe("The assistant's public asst_ id.") }),
        response: {
          200: z.object({
            assistantId: z.string().describe('The public asst_ id.'),
            name: z.string(),
            welcomeMessage: z.string().nullable(),
            voice: z.object({
              enabled: z.boolean(),
              recording: z.enum(['off', 'on']),
              requireConsent: z.boolean(),
              transports: z
                .array(z.enum(['webrtc', 'websocket']))
                .describe(
                  "The transports this server's voice takes, in the order to try them (webrtc: straight to the provider; websocket: Parley's media relay). A mint for another is refused 400 VOICE_TRANSPORT_UNSUPPORTED.",
                ),
            }),
            requireWidgetSigning: z.boolean(),
          }),
        },
      },
      openapi: {
        summary: 'Widget configuration of an assistant',
        description:
          'What the embeddable widget needs to render: name, welcome message, voice and signing settings. Keyless, from an allowed Origin.',
        tags,
        errors: policyErrors,
      },
      handler: async (ctx) => reply.json(await service.widgetConfig(deps, ctx, ctx.params.publicId)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/feedback',
      auth: 'none',
      cors: true,
      schemas: {
        body: z
          .object({
            messageId: z.string().min(1).max(100),
            rating: z.enum(['positive', 'negative']),
            visitorId: visitorId.optional(),
          })
          .strict(),
        response: {
          200: z.object({
            ok: z.literal(true),
            feedback: z.object({
              messageId: z.string(),
              rating: z.enum(['positive', 'negative']),
              createdAt: z.string(),
              updatedAt: z.string(),
            }),
          }),
        },
      },
      openapi: {
        summary: 'Rate an answer (one rating per answer; a new one replaces it)',
        description: "Keyless, from an allowed Origin; counted in the assistant's analytics.",
        tags,
        errors: { 400: 'Invalid body', ...policyErrors, 404: 'No such message' },
      },
      handler: async (ctx) => reply.json({ ok: true, feedback: await service.recordFeedback(deps, ctx, ctx.body) }),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/widget/sign',
      auth: 'none',
      cors: true,
      schemas: {
        body: z
          .object({
            assistantId: z.string().min(1).max(100).describe('The public asst_ id.'),
            visitorId: visitorId
              .optional()
              .describe(
                "Omit for a new visitor: Parley makes up the id. Given: a renewal, with that visitor's previous signature (at most 7 days old) in X-Parley-Signature.",
              ),
          })
          .strict(),
        response: {
          200: z.object({
            visitorId: z.string().describe('The signed visitor id (the one made up for a new visitor).'),
            timestamp: z.number().int().describe('Unix seconds.'),
            signature: z
              .string()
              .describe('t=<unix>,v1=<hex HMAC-SHA256 over publicId:visitorId:timestamp>; send as X-Parley-Signature.'),
          }),
        },
      },
      openapi: {
        summary: 'Sign a new visitor, or renew a signed visitor (valid for WIDGET_SIGNING_MAX_SKEW_SECONDS)',
        description:
          "For assistants that require signed visitors: the signature to send as X-Parley-Signature with keyless chat, feedback and voice calls. Never signs an id the caller chose: a new visitor gets an id made up by Parley; a known visitor is re-signed only with its previous signature. Visitors known to the owner's own backend are signed there with the assistant's widget secret.",
        tags,
        errors: { 400: 'Invalid body', ...policyErrors },
      },
      handler: async (ctx) => reply.json(await service.signVisitor(deps, ctx, ctx.body)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/assistants/:assistantId/widget-secret',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: {
        params: z.object({ assistantId: assistantIdParam }),
        body: z.object({}).strict(),
        response: {
          200: z.object({
            assistantId: z.string().describe('The public asst_ id.'),
            secret: z
              .string()
              .describe(
                'Shown only in this answer. Your backend signs a visitor id as t=<unix>,v1=<hex HMAC-SHA256(secret, publicId:visitorId:t)>.',
              ),
            rotatedAt: z.string().datetime(),
          }),
        },
      },
      openapi: {
        summary: "Issue the assistant's widget secret (identity verification; the previous one stops working)",
        description:
          "Signed visitors from your own backend: sign your signed-in users' visitor ids with this secret and pass them to the widget (visitor-id and signature attributes). Calling this again rotates the secret.",
        tags: ['Assistants'],
        errors: {
          401: 'Missing or invalid API key',
          403: 'The key lacks the scope',
          404: 'No such assistant (or not yours)',
        },
      },
      handler: async (ctx) => {
        const issued = await service.rotateWidgetSecret(deps, ownerOf(ctx), ctx.params.assistantId);
        ctx.log.info({ assistantId: issued.assistantId }, 'widget secret issued');
        return reply.json({ ...issued, rotatedAt: issued.rotatedAt.toISOString() }, 200, {
          'cache-control': 'no-store',
        });
      },
    }),
  ];
}

import { z } from 'zod';
import { ownerOf } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute } from '../http/index.js';
import * as service from './service.js';

const tags = ['Phone numbers'];

const phoneNumberId = z
  .string()
  .regex(/^pn_[0-9a-f]{24}$/, 'not a phone number id')
  .describe('A phone number id (pn_...).');
const params = z.object({ phoneNumberId });

export const phoneNumberSchema = z
  .object({
    id: z.string(),
    phoneNumber: z.string().describe('E.164, e.g. +15550100123.'),
    assistantId: z.string().describe('The assistant that answers calls to this number.'),
    provider: z.enum(['twilio']),
    voiceUrl: z
      .string()
      .describe(
        "Paste into the carrier's console as the number's voice webhook (HTTP POST): {PUBLIC_URL}" +
          service.VOICE_WEBHOOK_PATH,
      ),
    createdAt: z.string(),
  })
  .meta({ id: 'PhoneNumber' });

const createBody = z.object({
  phoneNumber: z
    .string()
    .regex(/^\+[1-9][0-9]{6,14}$/, 'must be an E.164 number (+ and 7 to 15 digits)')
    .describe('E.164, e.g. +15550100123.'),
  assistantId: z.string().min(1).max(100).describe('Public asst_ or internal id of an assistant of yours.'),
  provider: z.literal('twilio'),
  accountSid: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'must be a carrier account SID (AC + 32 hex digits)')
    .describe("The carrier account's SID (AccountSid)."),
  authToken: z
    .string()
    .min(16)
    .max(128)
    .describe('The carrier account auth token: checks the signature of every call. Write-only, stored encrypted.'),
});

const errors = {
  401: 'Missing or invalid API key',
  403: 'The key lacks the scope',
  404: 'No such phone number (or not yours)',
};

const hostOf = (headers: Readonly<Record<string, string>>) => headers['host'];

/** Owner REST: /api/v1/phone-numbers (Bearer assistants:write / assistants:read, or the dashboard session). */
export function phoneNumberRoutes(deps: service.TelephonyDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/phone-numbers',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { body: createBody, response: { 201: phoneNumberSchema } },
      openapi: {
        summary: 'Add a phone number',
        description:
          "Calls to the number reach the assistant once the carrier's voice webhook is set to voiceUrl. The auth token is never returned.",
        tags,
        errors: {
          400: 'Invalid body',
          404: 'No such assistant (or not yours)',
          409: 'The number is already registered (TELEPHONY_NUMBER_TAKEN), or the server cannot know the URL the carrier will call (TELEPHONY_PUBLIC_URL_REQUIRED)',
          401: errors[401],
          403: errors[403],
        },
      },
      handler: async (ctx) => reply.json(await service.createNumber(deps, ownerOf(ctx), ctx.body, ctx.headers), 201),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/phone-numbers',
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { response: { 200: z.object({ phoneNumbers: z.array(phoneNumberSchema) }) } },
      openapi: {
        summary: 'List phone numbers',
        description: 'Newest first (at most 100).',
        tags,
        errors: { 401: errors[401], 403: errors[403] },
      },
      handler: async (ctx) => reply.json({ phoneNumbers: await service.listNumbers(deps, ownerOf(ctx), ctx.headers) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/v1/phone-numbers/:phoneNumberId',
      auth: 'bearer',
      scope: 'assistants:read',
      schemas: { params, response: { 200: phoneNumberSchema } },
      openapi: { summary: 'Get a phone number', description: 'Without its auth token.', tags, errors },
      handler: async (ctx) =>
        reply.json(await service.getNumber(deps, ownerOf(ctx), ctx.params.phoneNumberId, ctx.headers)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/v1/phone-numbers/:phoneNumberId',
      auth: 'bearer',
      scope: 'assistants:write',
      schemas: { params, response: { 200: z.object({ ok: z.literal(true) }) } },
      openapi: {
        summary: 'Delete a phone number',
        description: 'Calls to it are rejected from now on; calls in progress go on.',
        tags,
        errors,
      },
      handler: async (ctx) => {
        await service.deleteNumber(deps, ownerOf(ctx), ctx.params.phoneNumberId);
        return reply.json({ ok: true as const });
      },
    }),
    defineRoute({
      method: 'POST',
      path: service.VOICE_WEBHOOK_PATH,
      auth: 'none',
      rawBody: true,
      schemas: { body: z.unknown(), response: { 200: z.string() } },
      openapi: {
        summary: "The carrier's call webhook (Twilio voice URL)",
        description:
          'Form-encoded, signed with X-Twilio-Signature. Answers TwiML: the media stream, a rejection for an unknown number, or a short spoken refusal.',
        tags,
        contentTypes: { 200: 'text/xml' },
        errors: { 403: 'Missing or wrong signature (TELEPHONY_SIGNATURE_INVALID)' },
      },
      handler: async (ctx) => {
        const form = new URLSearchParams((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'));
        const params: Record<string, string> = {};
        for (const [name, value] of form) params[name] = value;
        const twiml = await service.answerCall(deps, {
          params,
          signature: ctx.headers['x-twilio-signature'],
          host: hostOf(ctx.headers),
          headers: ctx.headers,
          ip: ctx.ip,
          signal: ctx.signal,
        });
        return reply.bytes(twiml, 'text/xml; charset=utf-8');
      },
    }),
  ];
}

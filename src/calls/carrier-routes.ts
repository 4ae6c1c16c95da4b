import { z } from 'zod';
import { defineRoute, reply, type AnyRoute, type RequestContext } from '../http/index.js';
import * as events from './carrier-events.js';
import { CARRIER_CALL_PATH } from './paths.js';
import type { CallsDeps } from './service.js';

const tags = ['Calls'];
const params = z.object({ callId: z.string().min(1).max(100).describe('The call id (call_...).') });
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
const forbidden = { 403: 'Missing or wrong signature (TELEPHONY_SIGNATURE_INVALID)' };

function callbackOf(ctx: RequestContext<any, any, any>): events.CarrierCallback {
  const form = new URLSearchParams((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'));
  const values: Record<string, string> = {};
  for (const [name, value] of form) values[name] = value;
  return {
    callId: String(ctx.params.callId ?? ''),
    params: values,
    signature: ctx.headers['x-twilio-signature'],
    headers: ctx.headers,
    ip: ctx.ip,
    host: ctx.headers['host'],
    signal: ctx.signal,
  };
}

/** The carrier's callbacks for calls Parley placed: form-encoded, signed with X-Twilio-Signature over their URL. */
export function carrierCallRoutes(deps: CallsDeps): AnyRoute[] {
  const xml = (text: string) => reply.bytes(text, 'text/xml; charset=utf-8');
  return [
    defineRoute({
      method: 'POST',
      path: `${CARRIER_CALL_PATH}/answer`,
      auth: 'none',
      rawBody: true,
      schemas: { params, body: z.unknown(), response: { 200: z.string() } },
      openapi: {
        summary: "The carrier's answer URL of a placed call",
        description: 'The callee answered: TwiML connecting the media stream to the assistant (or hanging up).',
        tags,
        contentTypes: { 200: 'text/xml' },
        errors: forbidden,
      },
      handler: async (ctx) => xml(await events.answered(deps, callbackOf(ctx))),
    }),
    defineRoute({
      method: 'POST',
      path: `${CARRIER_CALL_PATH}/status`,
      auth: 'none',
      rawBody: true,
      schemas: { params, body: z.unknown(), response: { 200: z.string() } },
      openapi: {
        summary: "The carrier's status callback of a placed call",
        description:
          'CallStatus moves the call forward (initiated, ringing, in-progress, completed, busy, no-answer...).',
        tags,
        contentTypes: { 200: 'text/xml' },
        errors: forbidden,
      },
      handler: async (ctx) => {
        await events.statusChanged(deps, callbackOf(ctx));
        return xml(EMPTY_TWIML);
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${CARRIER_CALL_PATH}/machine`,
      auth: 'none',
      rawBody: true,
      schemas: { params, body: z.unknown(), response: { 200: z.string() } },
      openapi: {
        summary: "The carrier's answering-machine verdict of a placed call",
        description: "AnsweredBy (human, machine_end_beep, ...): on a machine the call's voicemail rule runs.",
        tags,
        contentTypes: { 200: 'text/xml' },
        errors: forbidden,
      },
      handler: async (ctx) => {
        await events.machineDetected(deps, callbackOf(ctx));
        return xml(EMPTY_TWIML);
      },
    }),
  ];
}

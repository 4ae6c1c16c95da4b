import { z } from 'zod';
import { tenantOf, type Admission } from '../admission/index.js';
import type { Principal } from '../auth/index.js';
import { defineRoute, reply, type AnyRoute, type RequestContext } from '../http/index.js';
import { END_REASONS } from './end-reasons.js';
import { voiceErrors } from './errors.js';
import type { VoiceService } from './session/service.js';
import { SESSION_ID_PATTERN } from './session/session-id.js';
import { CAPABILITIES } from './types.js';

const sessionParams = z.object({
  sessionId: z.string().regex(SESSION_ID_PATTERN, 'must be a voice session id (vs_...)'),
});
const tokenBody = z.object({ token: z.string().min(1).max(256).describe('The session controlToken from the mint.') });
const endReasonSchema = z
  .enum(END_REASONS)
  .nullable()
  .meta({ id: 'VoiceEndReason' })
  .describe(
    'Why the session ended; null when the client ended it. Widget callers see voice_unavailable for usage and disconnected for heartbeat, control and shutdown.',
  );

/** The call's audio, both ways (mint request and answer): what the provider's Live WebSocket accepts, passed through. */
const audioFormatSchema = z.discriminatedUnion('format', [
  z.object({ format: z.literal('pcm16'), sampleRateHz: z.union([z.literal(16000), z.literal(24000)]).default(24000) }),
  z.object({ format: z.literal('pcmu'), sampleRateHz: z.literal(8000).default(8000) }),
  z.object({ format: z.literal('pcma'), sampleRateHz: z.literal(8000).default(8000) }),
]);

/** How the caller connects: Parley's media WebSocket (default), or WebRTC straight to the provider. */
const transportSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('websocket') }),
  z.object({
    type: z.literal('webrtc'),
    sdp: z
      .string()
      .min(10)
      .max(64 * 1024)
      .regex(/^v=0\r?\n/, 'must be an SDP offer (starting v=0)')
      .describe("The browser's SDP offer, complete (ICE candidates gathered)."),
  }),
]);

export const mintBodySchema = z.object({
  assistantId: z
    .string()
    .min(1)
    .max(100)
    .describe('Public asst_ id (keyless callers); public or internal id owned by the key (bearer callers).'),
  capabilities: z
    .array(z.enum(CAPABILITIES))
    .max(8)
    .default([])
    .describe(
      'A set: every client must declare playback_gate; a client that wants supervision declares heartbeat. Unknown values are 400; a repeated value counts once; a list without playback_gate is 403 client_update_required.',
    ),
  recordingConsent: z
    .boolean()
    .optional()
    .describe(
      'Must be true when the session would be recorded and consent is required (always for widget/playground callers).',
    ),
  visitorId: z
    .string()
    .min(8)
    .max(80)
    .optional()
    .describe('Widget/playground visitor; a newer widget session of the same visitor ends the older one (superseded).'),
  conversationId: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Continue this conversation; a new one is started otherwise.'),
  source: z
    .enum(['api', 'widget', 'playground'])
    .optional()
    .describe(
      "playground is granted only to the assistant owner's signed-in dashboard session (same origin); keyless callers are always widget and Bearer callers always api, whatever they ask.",
    ),
  audio: audioFormatSchema
    .optional()
    .describe(
      'Audio both ways on the media socket, mono: pcm16 (little-endian) at 16000 or 24000 Hz, or G.711 pcmu (μ-law) / pcma (A-law) at 8000 Hz. Default pcm16 at 24000 Hz.',
    ),
  transport: transportSchema
    .optional()
    .describe(
      "websocket (default): audio through Parley's media socket (stream.url). webrtc: the browser's peer connection goes straight to the provider; the answer comes back under transport.sdp, and Parley supervises the call from the server side (the browser's data channel can send nothing). audio does not apply to webrtc (the browser negotiates its codec).",
    ),
});

export const mintResponseSchema = z
  .object({
    sessionId: z.string(),
    conversationId: z.string(),
    stream: z
      .object({
        url: z.string().describe('WebSocket URL of the media stream (carries the controlToken).'),
        protocol: z.literal('parley.voice.v1'),
      })
      .optional()
      .describe('The media WebSocket (websocket transport; absent for webrtc).'),
    transport: z
      .object({ type: z.literal('webrtc'), sdp: z.string().describe("The provider's SDP answer.") })
      .optional()
      .describe('WebRTC calls: apply sdp as the remote answer; the audio goes to the provider, not through Parley.'),
    audio: z
      .object({
        format: z.enum(['pcm16', 'pcmu', 'pcma']),
        sampleRateHz: z.union([z.literal(8000), z.literal(16000), z.literal(24000)]),
        channels: z.literal(1),
      })
      .describe('The audio both ways, as asked in the mint (pcm16 at 24000 Hz when it named none).'),
    recording: z.object({ enabled: z.boolean(), consented: z.boolean() }),
    controlToken: z.string().describe('Session-scoped, expiring; the body token of heartbeat and gate.'),
    heartbeatIntervalMs: z.number().int().optional().describe('Present when heartbeat was declared.'),
    playbackGate: z.literal(true),
    expiresAt: z.string().describe('When the controlToken expires (ISO 8601).'),
  })
  .meta({ id: 'VoiceSession' });

export const heartbeatResponseSchema = z
  .object({
    status: z.enum(['healthy', 'degraded', 'ended', 'lost']),
    nextHeartbeatMs: z.number().int().describe('Send the next heartbeat after this long (shorter while degraded).'),
    endReason: endReasonSchema.optional().describe('Present when ended or lost.'),
  })
  .meta({ id: 'VoiceHeartbeat' });

export const endResponseSchema = z
  .object({
    sessionId: z.string(),
    status: z.enum(['ended', 'lost']),
    endReason: endReasonSchema,
    billableSeconds: z.number().int(),
    usageFinalized: z.boolean().describe("True when billableSeconds is the provider's final figure."),
  })
  .meta({ id: 'VoiceSessionEnd' });

/** Documentation of the NDJSON lines (the stream is not JSON as a whole). */
export const gateLineSchema = z
  .union([
    z.object({
      type: z.literal('gate'),
      seq: z.number().int(),
      state: z.enum(['open', 'closed']),
      reason: z.enum(['start', 'user_speaking', 'pending_backend', 'backend_answer', 'social']),
      inputEndMs: z.number().int().nullable(),
    }),
    z.object({ type: z.literal('keepalive') }),
    z.object({ type: z.literal('end'), endReason: endReasonSchema }),
  ])
  .meta({ id: 'VoiceGateLine', description: 'One line of the gate stream: a decision, a keepalive, or the end.' });

const misrouted =
  'The session runs on another instance (reason misrouted; details.instanceId and the X-Parley-Instance header name it).';

function keylessRequest(ctx: RequestContext<unknown, unknown, unknown>) {
  return { headers: ctx.headers, ip: ctx.ip, host: ctx.headers['host'] };
}

export function voiceRoutes(service: VoiceService, admission?: Admission): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/v1/voice/sessions',
      auth: 'bearer-or-keyless',
      scope: 'voice',
      cors: true,
      // Capabilities answer before identity (an outdated client learns it must update even without a key): the handler authenticates after checking them.
      deferAuth: true,
      schemas: { body: mintBodySchema, response: { 200: mintResponseSchema } },
      openapi: {
        summary: 'Mint a realtime voice session',
        description:
          'Bearer key with the voice scope, or keyless with the public asst_ id under the widget security policy. ' +
          'The provider session is started with its data channel locked (no client events) before this answers.',
        tags: ['Voice'],
        errors: {
          400: 'Unknown capability, invalid body, recordingConsent missing where consent is required, or a transport the voice provider does not take (VOICE_TRANSPORT_UNSUPPORTED).',
          401: 'Invalid API key.',
          402: "API-key callers: reason voice_minutes_exhausted, the account's voice minutes for the period are used up.",
          403: 'Missing voice scope; voice disabled; reason client_update_required (no playback_gate); reason voice_unavailable (widget refusals).',
          404: 'Assistant not found.',
          429: 'Rate limit (no reason), or reason voice_concurrency_limit.',
          502: 'reason voice_unavailable: the provider did not confirm the data-channel restriction (WebRTC too: no answer is returned and nothing is billed), or refused the session.',
          503: 'Voice is not configured, this instance is draining (Retry-After), it is busy (SERVICE_OVERLOADED, Retry-After), or a dependency did not answer (DEPENDENCY_UNAVAILABLE).',
        },
      },
      handler: async (ctx) => {
        if (!ctx.body.capabilities.includes('playback_gate')) throw voiceErrors.clientUpdateRequired();
        const principal = (await ctx.authenticate()) as Principal;
        // A slot before any query or provider start (src/admission): past the instance's capacity the mint waits in
        // its tenant's queue or is refused 503 SERVICE_OVERLOADED with Retry-After (no plan or usage named).
        const release = admission
          ? await admission.acquire(tenantOf(principal, ctx.body.assistantId), ctx.signal)
          : undefined;
        try {
          const minted = await service.mint(ctx.body, {
            principal,
            request: keylessRequest(ctx),
            signal: ctx.signal,
            log: ctx.log,
          });
          return reply.json(minted);
        } finally {
          release?.();
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/voice/sessions/:sessionId/heartbeat',
      auth: 'control-token',
      rateLimitExempt: true,
      cors: true,
      schemas: { params: sessionParams, body: tokenBody, response: { 200: heartbeatResponseSchema } },
      openapi: {
        summary: 'Voice session heartbeat',
        description: 'Send { token } every heartbeatIntervalMs. 45 s without one ends the session (heartbeat_lost).',
        tags: ['Voice'],
        errors: {
          404: 'Unknown session or wrong token.',
          421: misrouted,
          429: 'More than one heartbeat per second (Retry-After: 1).',
        },
      },
      handler: async (ctx) => reply.json(await service.heartbeat(ctx.params.sessionId, ctx.body.token)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/voice/sessions/:sessionId/gate',
      auth: 'control-token',
      cors: true,
      schemas: { params: sessionParams, body: tokenBody, response: { 200: gateLineSchema } },
      openapi: {
        summary: 'Playback gate decisions (NDJSON stream)',
        description:
          'One JSON object per line: the current decision first, then every new one, {"type":"keepalive"} every 10 s, ' +
          '{"type":"end","endReason":...} last. Keep assistant audio and captions muted unless the latest decision is open. ' +
          'At most 4 open streams per session.',
        tags: ['Voice'],
        contentTypes: { 200: 'application/x-ndjson' },
        responseDescriptions: { 200: 'A stream of gate, keepalive and end lines (each line matches this schema).' },
        errors: {
          404: 'Unknown session or wrong token.',
          421: misrouted,
          429: 'Four gate streams are already open for this session.',
        },
      },
      handler: async (ctx) => {
        const opening = await service.openGate(ctx.params.sessionId, ctx.body.token);
        if (opening.kind === 'over') {
          return reply.ndjson(async (sink) => {
            for (const line of opening.lines) if (!(await sink.write(line))) return;
          });
        }
        const { stream } = opening;
        // The reader may leave before the stream starts (then run never runs): free the slot either way.
        if (ctx.signal.aborted) stream.close();
        else ctx.signal.addEventListener('abort', () => stream.close(), { once: true });
        return reply.ndjson(async (sink) => {
          try {
            for (;;) {
              const line = await stream.next();
              if (line === null || !(await sink.write(line))) break;
            }
          } finally {
            stream.close();
          }
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/voice/sessions/:sessionId/end',
      auth: 'bearer-or-keyless',
      scope: 'voice',
      cors: true,
      rateLimitExempt: true, // ending must never be refused: a refused end keeps the call running and billing
      schemas: {
        params: sessionParams,
        body: z.object({
          visitorId: z
            .string()
            .min(8)
            .max(80)
            .optional()
            .describe('Keyless callers: the visitor the session was minted for.'),
        }),
        response: { 200: endResponseSchema },
      },
      openapi: {
        summary: 'End a voice session',
        description:
          'Ends the session (endReason null). After a service-side end the same final answer is available for 5 minutes, then 404.',
        tags: ['Voice'],
        errors: { 404: "Unknown session, not the caller's, or over for more than 5 minutes.", 421: misrouted },
      },
      handler: async (ctx) => {
        const answer = await service.end(ctx.params.sessionId, {
          principal: ctx.principal as Principal,
          visitorId: ctx.body.visitorId ?? null,
          request: keylessRequest(ctx),
        });
        return reply.json(answer);
      },
    }),
  ];
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { WebSocket, WebSocketServer } from 'ws';
import type { LiveCreateParams, SessionStartEvent, SessionResource } from 'openai/resources/live/live';
import { faultsFromInstructions, parseFaults, type SimulatorFaults } from './faults.js';
import { SimSession } from './sim-session.js';
import type { SimAudio } from './audio.js';
import { SidebandHub } from './sideband.js';
import { SimPeer } from './webrtc-peer.js';
import { offersPcmu } from './rtp.js';
import { newSessionRecord, type SimTiming, type VoiceSimulatorStats } from './types.js';

/** What the WebRTC endpoints share with the simulator's server (server.ts). */
export interface SimWebRtcContext {
  baseFaults: SimulatorFaults;
  apiKey: string | undefined;
  seed: number;
  timing: SimTiming;
  stats: VoiceSimulatorStats;
  wss: WebSocketServer;
  /** The session's voice, PCM16 24 kHz (WebRTC sessions hear and speak PCM16 24 kHz; the peer converts to PCMU). */
  audio: SimAudio;
  resolveResource(id: string, start: SessionStartEvent, faults: SimulatorFaults, now: number): SessionResource;
  register(session: SimSession): void;
  onSessionEnd(id: string): void;
  refuse(socket: Duplex, status: number, type: string, code: string, message: string, param?: string): void;
}

const CREATE = /^\/v1\/live\/sessions$/;
const HANGUP = /^\/v1\/live\/sessions\/([A-Za-z0-9_-]{1,80})\/hangup$/;
const ATTACH = /^\/v1\/live\/sessions\/([A-Za-z0-9_-]{1,80})\/attach$/;
const MAX_BODY = 256 * 1024;

/**
 * The simulator's WebRTC side, as the provider's Live API has it: `POST /v1/live/sessions` with
 * `transport: {type: 'webrtc', sdp}` answers the offer with a real peer (webrtc-peer.ts) and starts the session;
 * `GET /v1/live/sessions/{id}/attach` (WebSocket) is the server's sideband; `POST /v1/live/sessions/{id}/hangup`
 * ends the call. Fault hooks: webrtc-refused and webrtc-unreachable (create), drop-after (the sideband),
 * refuse-reconnect (re-attach).
 */
export function simulatorWebRtc(ctx: SimWebRtcContext) {
  const hubs = new Map<string, { hub: SidebandHub; session: SimSession }>();

  function json(res: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  }
  const error = (res: ServerResponse, status: number, code: string, message: string, param?: string) =>
    json(res, status, {
      error: {
        type: status >= 500 ? 'server_error' : 'invalid_request_error',
        code,
        message,
        ...(param === undefined ? {} : { param }),
      },
    });

  async function create(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    let body: LiveCreateParams;
    try {
      body = JSON.parse(await readBody(req)) as LiveCreateParams;
    } catch {
      return error(res, 400, 'invalid_json', 'The body is not JSON.');
    }
    if (body?.transport?.type !== 'webrtc' || typeof body.transport.sdp !== 'string')
      return error(res, 400, 'invalid_transport', 'transport must be {type: "webrtc", sdp}.', 'transport');
    if (typeof body.session?.model !== 'string') return error(res, 400, 'missing_model', 'session.model is required.');
    const faults: SimulatorFaults = {
      ...ctx.baseFaults,
      ...parseFaults(`${String(req.headers['x-simulator-faults'] ?? '')},${url.searchParams.get('sim_faults') ?? ''}`),
      ...faultsFromInstructions(body.session.instructions),
    };
    if (faults.webrtcRefused !== undefined)
      return error(res, faults.webrtcRefused, 'webrtc_unavailable', 'WebRTC sessions are unavailable.');
    if (faults.lock === 'rejected') {
      const param = 'session.client.data_channel.allowed_client_events';
      return error(res, 400, 'unknown_parameter', 'Unsupported data_channel restriction.', param);
    }
    if (faults.startRefused !== undefined) return error(res, faults.startRefused, 'session_refused', 'Refused.');
    if (!offersPcmu(body.transport.sdp))
      return error(res, 400, 'unsupported_offer', 'The offer carries no PCMU audio.', 'transport.sdp');

    const id = `sess_${randomBytes(8).toString('hex')}`;
    const start: SessionStartEvent = { type: 'session.start', session: { ...body.session, audio: {} } };
    const resource = ctx.resolveResource(id, start, faults, ctx.timing.now());
    const record = newSessionRecord(id, faults, 'webrtc.create');
    let hub: SidebandHub | undefined;
    let session: SimSession | undefined;
    let answerSdp: string;
    try {
      const answered = await SimPeer.answer(body.transport.sdp, {
        audio: (pcm) => hub?.hear(pcm, (b64) => session?.onAudio(b64)),
        gone: () => session?.hangUp('remote_hangup'),
      });
      answerSdp = answered.answerSdp;
      hub = new SidebandHub(answered.peer, ctx.timing.replayCount);
      // Unreachable: the answer is valid but its peer is gone, so the browser's ICE checks go unanswered.
      if (faults.webrtcUnreachable) answered.peer.close();
    } catch {
      return error(res, 400, 'invalid_offer', 'The offer could not be answered.', 'transport.sdp');
    }
    session = new SimSession(record, resource, faults, ctx.seed, ctx.timing, ctx.stats, ctx.audio, (sid) => {
      hubs.delete(sid);
      ctx.onSessionEnd(sid);
    });
    ctx.register(session);
    hubs.set(id, { hub, session });
    session.attach(hub as unknown as WebSocket, false);
    json(res, 200, { session: { id }, transport: { type: 'webrtc', sdp: answerSdp } });
  }

  return {
    /** True when the request was one of the WebRTC endpoints (answered here). */
    request(req: IncomingMessage, res: ServerResponse): boolean {
      const url = new URL(req.url ?? '/', 'http://simulator');
      const isCreate = CREATE.test(url.pathname);
      const hangup = HANGUP.exec(url.pathname);
      if (req.method !== 'POST' || (!isCreate && hangup === null)) return false;
      if (ctx.apiKey !== undefined && req.headers.authorization !== `Bearer ${ctx.apiKey}`) {
        error(res, 401, 'invalid_api_key', 'Incorrect API key provided.');
        return true;
      }
      if (isCreate) {
        create(req, res, url).catch(() => error(res, 500, 'server_error', 'The session could not be created.'));
        return true;
      }
      const found = hubs.get(hangup![1]!);
      if (found === undefined) error(res, 404, 'session_not_found', 'No such session.');
      else {
        found.session.record.clientEvents.push('hangup');
        found.hub.hangup();
        res.writeHead(204).end();
      }
      return true;
    },

    /** True when the upgrade was a sideband attach (handled here). */
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean {
      const url = new URL(req.url ?? '/', 'ws://simulator');
      const match = ATTACH.exec(url.pathname);
      if (match === null) return false;
      if (ctx.apiKey !== undefined && req.headers.authorization !== `Bearer ${ctx.apiKey}`) {
        ctx.refuse(socket, 401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.');
        return true;
      }
      const found = hubs.get(match[1]!);
      if (found === undefined || found.session.ended) {
        ctx.refuse(socket, 404, 'invalid_request_error', 'session_not_found', 'No such session.');
        return true;
      }
      const refusal = found.session.record.faults.refuseReconnect;
      if (found.hub.attaches > 0 && refusal !== undefined) {
        const type = refusal >= 500 ? 'server_error' : 'invalid_request_error';
        ctx.refuse(socket, refusal, type, 'attach_refused', 'Sideband attach refused.');
        return true;
      }
      ctx.wss.handleUpgrade(req, socket, head, (ws) => {
        ctx.stats.connections++;
        ws.on('ping', () => ctx.stats.pingsReceived++);
        if (found.hub.attaches > 0) {
          found.session.record.resumes++;
          ctx.stats.resumes++;
        }
        found.hub.attach(ws);
      });
      return true;
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY) reject(new Error('body too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

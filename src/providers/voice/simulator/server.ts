import { createServer, type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import type { SessionResource, SessionStartEvent } from 'openai/resources/live/live';
import { faultsFromInstructions, parseFaults, type SimulatorFaults } from './faults.js';
import { SimSession } from './sim-session.js';
import { newSessionRecord, type SimTiming } from './types.js';
import { toneSecond } from './media.js';
import { simAudioFor, type SimAudio } from './audio.js';
import * as ev from './events.js';
import { simulatorWebRtc } from './webrtc.js';
import type { VoiceSimulatorStats } from './types.js';

export interface VoiceSimulatorOptions {
  /** 0 (default) picks an ephemeral port. */
  port?: number;
  /** Loopback only by default. */
  host?: string;
  /** Seed of every session's word stream (same seed, same transcript). Default 1. */
  seed?: number;
  /** When set, upgrades must carry `Authorization: Bearer <apiKey>` (else 401 invalid_api_key). */
  apiKey?: string;
  /** Faults for every session (see faults.ts); per-session sources override these. */
  defaultFaults?: string;
  /** Echo mode for every session (the benchmark's relay round trip). */
  echo?: boolean;
  /** Assistant speech: a PCM16LE 24 kHz mono fixture instead of the 440 Hz tone (converted to each session's format). */
  outputPcm?: Buffer;
  usageIntervalMs?: number;
  transcriptChunkMs?: number;
  wordMs?: number;
  outputFrameIntervalMs?: number;
  resumeWindowMs?: number;
  replayCount?: number;
  /** Keep raw frames per session (type-level contract test). Off by default: it grows with the call. */
  recordWire?: boolean;
  /** Ended sessions kept in stats.sessions (oldest forgotten first), so an in-process simulator stays bounded. */
  retainEnded?: number;
  now?: () => number;
}

export interface VoiceSimulator {
  /** ws://host:port/v1/live/sessions: give it to createVoiceProvider({kind: 'simulator', url}). */
  readonly url: string;
  readonly port: number;
  /** Live counters, updated in place. */
  readonly stats: VoiceSimulatorStats;
  /** Hang up every session (session.closed remote_hangup), close sockets and the listener. */
  close(): Promise<void>;
}

const PATH = '/v1/live/sessions';

/**
 * Start a GPT-Live provider simulator on loopback: a real WebSocket server (ws on a node:http server; only src/http
 * may use uWS) speaking the primary protocol with fault hooks. Used in-process by tests, the offline default and
 * the benchmark, and standalone through `npm run simulator`.
 */
export async function startVoiceSimulator(options: VoiceSimulatorOptions = {}): Promise<VoiceSimulator> {
  const host = options.host ?? '127.0.0.1';
  const seed = options.seed ?? 1;
  const baseFaults: SimulatorFaults = {
    ...parseFaults(options.defaultFaults),
    ...(options.echo ? { echo: true } : {}),
  };
  const timing: SimTiming = {
    usageIntervalMs: options.usageIntervalMs ?? 1000,
    transcriptChunkMs: options.transcriptChunkMs ?? 400,
    wordMs: options.wordMs ?? 240,
    outputFrameIntervalMs: options.outputFrameIntervalMs ?? 20,
    resumeWindowMs: options.resumeWindowMs ?? 30_000,
    replayCount: options.replayCount ?? 16,
    recordWire: options.recordWire ?? false,
    now: options.now ?? Date.now,
  };
  const voice = options.outputPcm ?? toneSecond();
  const voices = new Map<string, SimAudio>();
  const stats: VoiceSimulatorStats = {
    connections: 0,
    refusedHandshakes: 0,
    sessionsStarted: 0,
    sessionsActive: 0,
    resumes: 0,
    audioFramesIn: 0,
    audioFramesOut: 0,
    pingsReceived: 0,
    sessions: new Map(),
  };
  const live = new Map<string, SimSession>();
  const endedOrder: string[] = [];
  const retainEnded = options.retainEnded ?? 1000;
  const onSessionEnd = (id: string): void => {
    live.delete(id);
    endedOrder.push(id);
    while (endedOrder.length > retainEnded) stats.sessions.delete(endedOrder.shift()!);
  };
  const pendingStarts = new Set<NodeJS.Timeout>();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 16 * 1024 * 1024 });
  const http = createServer((req, res) => {
    if (webrtc.request(req, res)) return;
    res.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket only\n');
  });

  function refuse(socket: Duplex, status: number, type: string, code: string, message: string, param?: string): void {
    stats.refusedHandshakes++;
    const body = JSON.stringify({ error: { type, code, message, ...(param === undefined ? {} : { param }) } });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  const webrtc = simulatorWebRtc({
    baseFaults,
    apiKey: options.apiKey,
    seed,
    timing,
    stats,
    wss,
    audio: simAudioFor(undefined, voice, voices),
    resolveResource,
    register: (session) => {
      stats.sessions.set(session.id, session.record);
      stats.sessionsStarted++;
      stats.sessionsActive++;
      live.set(session.id, session);
    },
    onSessionEnd,
    refuse,
  });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    if (webrtc.upgrade(req, socket, head)) return;
    const url = new URL(req.url ?? '/', 'ws://simulator');
    if (url.pathname !== PATH) return refuse(socket, 404, 'invalid_request_error', 'not_found', 'Unknown path.');
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return refuse(socket, 401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.');
    }
    const headerFaults =
      String(req.headers['x-simulator-faults'] ?? '') + ',' + (url.searchParams.get('sim_faults') ?? '');
    const faults: SimulatorFaults = { ...baseFaults, ...parseFaults(headerFaults) };
    const resumeId = url.searchParams.get('session_id');
    if (resumeId !== null) {
      const target = live.get(resumeId);
      const refusal = target?.record.faults.refuseReconnect ?? faults.refuseReconnect;
      if (target === undefined || !target.canResume()) {
        return refuse(socket, 410, 'invalid_request_error', 'session_not_resumable', 'The session cannot be resumed.');
      }
      if (refusal !== undefined)
        return refuse(
          socket,
          refusal,
          refusal >= 500 ? 'server_error' : 'invalid_request_error',
          'resume_refused',
          'Resume refused.',
        );
      return wss.handleUpgrade(req, socket, head, (ws) => {
        stats.connections++;
        ws.on('ping', () => stats.pingsReceived++);
        target.attach(ws, true);
      });
    }
    if (faults.lock === 'rejected') {
      return refuse(
        socket,
        400,
        'invalid_request_error',
        'unknown_parameter',
        'Unsupported data_channel restriction.',
        'session.client.data_channel.allowed_client_events',
      );
    }
    if (faults.startRefused !== undefined) {
      const s = faults.startRefused;
      return refuse(
        socket,
        s,
        s >= 500 ? 'server_error' : 'invalid_request_error',
        s === 429 ? 'rate_limit_exceeded' : 'session_refused',
        'Session refused.',
      );
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      stats.connections++;
      ws.on('ping', () => stats.pingsReceived++);
      awaitStart(ws, faults);
    });
  });

  /** A new socket must send session.start first; everything else about the session is decided by it. */
  function awaitStart(ws: WebSocket, connectionFaults: SimulatorFaults): void {
    ws.once('message', (data, isBinary) => {
      const fail = (code: string, message: string, closeCode: number, param?: string): void => {
        ws.send(
          ev.serialize(
            ev.error(
              `evt_start_${randomBytes(4).toString('hex')}`,
              closeCode === 1011 ? 'server_error' : 'invalid_request_error',
              code,
              message,
              param,
            ),
          ),
        );
        ws.close(closeCode);
      };
      let start: SessionStartEvent;
      try {
        start = JSON.parse(isBinary ? '' : (data as Buffer).toString('utf8')) as SessionStartEvent;
      } catch {
        return fail('invalid_json', 'Send session.start first.', 1008);
      }
      if (start?.type !== 'session.start' || typeof start.session?.model !== 'string') {
        return fail('session_not_started', 'Send session.start with a model first.', 1008);
      }
      const faults = { ...connectionFaults, ...faultsFromInstructions(start.session.instructions) };
      if (faults.lock === 'rejected') {
        return fail(
          'unknown_parameter',
          'Unsupported data_channel restriction.',
          1008,
          'session.client.data_channel.allowed_client_events',
        );
      }
      if (faults.startRefused !== undefined)
        return fail('session_refused', 'Session refused.', faults.startRefused >= 500 ? 1011 : 1008);
      const id = `sess_${randomBytes(8).toString('hex')}`;
      const resource = resolveResource(id, start, faults, timing.now());
      const wireIn = timing.recordWire ? [(data as Buffer).toString('utf8')] : [];
      const record = newSessionRecord(id, faults, 'session.start', wireIn);
      const begin = (): void => {
        if (ws.readyState !== ws.OPEN) return;
        const session = new SimSession(
          record,
          resource,
          faults,
          seed,
          timing,
          stats,
          simAudioFor(resource.audio?.format, voice, voices),
          onSessionEnd,
        );
        stats.sessions.set(id, record);
        stats.sessionsStarted++;
        stats.sessionsActive++;
        live.set(id, session);
        session.attach(ws, false);
      };
      if (faults.slowStartMs === undefined) return begin();
      const timer = setTimeout(() => {
        pendingStarts.delete(timer);
        begin();
      }, faults.slowStartMs);
      pendingStarts.add(timer);
    });
  }

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;

  return {
    url: `ws://${urlHost}:${port}${PATH}`,
    port,
    stats,
    close() {
      closing ??= (async () => {
        for (const timer of pendingStarts) clearTimeout(timer);
        for (const session of [...live.values()]) session.hangUp('remote_hangup');
        const done = new Promise<void>((resolve) => http.close(() => resolve()));
        // Give close frames a moment to flush, then cut whatever is left (a withheld or stuck client).
        await new Promise((resolve) => setTimeout(resolve, 50));
        for (const client of wss.clients) client.terminate();
        http.closeAllConnections();
        wss.close();
        await done;
      })();
      return closing;
    },
  };
}

/** The session as the provider resolves it: defaults filled in, the lock echoed (or not, under a lock fault). */
export function resolveResource(
  id: string,
  start: SessionStartEvent,
  faults: SimulatorFaults,
  now: number,
): SessionResource {
  const asked = start.session;
  const resource: SessionResource = {
    id,
    model: asked.model,
    status: 'active',
    expires_at: Math.floor(now / 1000) + 3600,
    audio: {
      format: asked.audio?.format ?? { type: 'audio/pcm', rate: 24000 },
      output: { voice: asked.audio?.output?.voice ?? 'marin' },
    },
    delegation: asked.delegation ?? null,
    instructions: asked.instructions ?? null,
    store: asked.store ?? false,
  };
  if (faults.lock === 'omit') return resource;
  if (faults.lock === 'all') return { ...resource, client: { data_channel: { allowed_client_events: 'all' } } };
  if (faults.lock === 'list')
    return { ...resource, client: { data_channel: { allowed_client_events: ['session.input_audio.mute'] } } };
  if (asked.client !== undefined) resource.client = asked.client;
  return resource;
}

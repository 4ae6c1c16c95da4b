/**
 * Parley's voice client side, as documented in API-DECISIONS "Voice": mint over HTTP with an API key (voice scope,
 * capabilities heartbeat + playback_gate), media WebSocket at `stream.url?token=<controlToken>`, a heartbeat every
 * heartbeatIntervalMs, one gate NDJSON stream held open, end on the way out. Used by the load workers and by the
 * runner's probe (which skips the scenario while the media socket path answers 404).
 */
import { WebSocket } from 'ws';
import { assertLoopback } from '../harness/children.js';

export interface ParleyTarget {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  apiKey: string;
  assistantId: string;
}

export interface MintAnswer {
  sessionId: string;
  stream: { url: string; protocol: string };
  controlToken: string;
  heartbeatIntervalMs?: number;
}

/** A refusal that means "this part of Parley does not exist yet" rather than "it is broken". */
export class NotBuiltYet extends Error {}

export async function mint(target: ParleyTarget): Promise<MintAnswer> {
  const res = await fetch(`${target.baseUrl}/api/v1/voice/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ assistantId: target.assistantId, capabilities: ['heartbeat', 'playback_gate'] }),
  });
  const text = await res.text();
  if (res.status === 404 && text.includes('HTTP_NOT_FOUND')) throw new NotBuiltYet('POST /api/v1/voice/sessions answered 404 (route not registered)');
  if (res.status !== 200) throw new Error(`mint answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as MintAnswer;
}

export function mediaUrl(baseUrl: string, answer: MintAnswer): string {
  const url = new URL(answer.stream.url, baseUrl);
  url.protocol = url.protocol === 'https:' || url.protocol === 'wss:' ? 'wss:' : 'ws:';
  if (!url.searchParams.has('token')) url.searchParams.set('token', answer.controlToken);
  assertLoopback(url.toString());
  return url.toString();
}

/** Open the media socket; a 404 on the upgrade means the relay has not landed yet. */
export function openMedia(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.binaryType = 'nodebuffer';
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      ws.terminate();
      const status = res.statusCode ?? 0;
      reject(status === 404 ? new NotBuiltYet('the media socket (GET /api/v1/voice/sessions/{id}/stream) answered 404: the Parley voice relay is not built yet') : new Error(`media socket answered ${status}`));
    });
    ws.once('error', reject);
  });
}

/** Supervision traffic a real client keeps up: heartbeats and one open gate stream. */
export class ParleyControl {
  heartbeats = 0;
  heartbeatFailures = 0;
  gateLines = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly gateAbort = new AbortController();

  constructor(
    private readonly target: ParleyTarget,
    private readonly answer: MintAnswer,
  ) {}

  start(): void {
    const every = this.answer.heartbeatIntervalMs ?? 5000;
    this.timer = setInterval(() => void this.heartbeat(), every);
    void this.holdGate();
  }

  private sessionUrl(suffix: string): string {
    return `${this.target.baseUrl}/api/v1/voice/sessions/${encodeURIComponent(this.answer.sessionId)}/${suffix}`;
  }

  private async heartbeat(): Promise<void> {
    try {
      const res = await fetch(this.sessionUrl('heartbeat'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: this.answer.controlToken }),
      });
      await res.arrayBuffer();
      if (res.status === 200) this.heartbeats++;
      else this.heartbeatFailures++;
    } catch {
      this.heartbeatFailures++;
    }
  }

  private async holdGate(): Promise<void> {
    try {
      const res = await fetch(this.sessionUrl('gate'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: this.answer.controlToken }),
        signal: this.gateAbort.signal,
      });
      if (res.body === null) return;
      for await (const chunk of res.body) {
        for (const byte of chunk as Uint8Array) if (byte === 0x0a) this.gateLines++;
      }
    } catch {
      // aborted on stop, or the session ended
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.gateAbort.abort();
    try {
      const res = await fetch(this.sessionUrl('end'), {
        method: 'POST',
        headers: { authorization: `Bearer ${this.target.apiKey}`, 'content-type': 'application/json' },
        body: '{}',
      });
      await res.arrayBuffer();
    } catch {
      // the server may already be gone
    }
  }
}

import WebSocket from 'ws';

/**
 * One voice call through the proxy, as a client would hold it: mint with an API key, the NDJSON gate stream, the
 * media WebSocket (20 ms of PCM every 100 ms), heartbeats at the interval the mint gave, then end. Everything it saw
 * is kept so the test can compare it with the database.
 */
export interface HeartbeatSeen {
  status: number;
  body: { status?: string; endReason?: string | null; code?: string } | undefined;
}

export interface EndSeen {
  sessionId: string;
  status: 'ended' | 'lost';
  endReason: string | null;
  billableSeconds: number;
  usageFinalized: boolean;
}

const FRAME = Buffer.alloc(960); // 20 ms of silence, PCM16 24 kHz mono

export class Caller {
  sessionId = '';
  controlToken = '';
  /** Every HTTP status this call saw (mint, heartbeats, gate, end, the media upgrade). */
  readonly statuses: number[] = [];
  readonly heartbeats: HeartbeatSeen[] = [];
  readonly gateLines: Array<{ type: string; [k: string]: unknown }> = [];
  mediaFramesSent = 0;
  mediaMessages = 0;
  mediaClose: { code: number; reason: string } | undefined;
  gateError: string | undefined;
  ended: EndSeen | undefined;
  /** The last heartbeat answered `lost` or `ended` (the call is over as far as the service is concerned). */
  over: HeartbeatSeen | undefined;
  private media: WebSocket | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private mediaTimer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  private gateDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly proxyUrl: string,
    private readonly apiKey: string,
    private readonly assistantId: string,
  ) {}

  get routeKey(): string | undefined {
    return /^vs_([a-z0-9]+)_/.exec(this.sessionId)?.[1];
  }

  count421(): number {
    return this.statuses.filter((s) => s === 421).length;
  }

  private async post(
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.proxyUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    this.statuses.push(res.status);
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = { raw: text.slice(0, 200) };
    }
    return { status: res.status, body: parsed };
  }

  async start(): Promise<void> {
    const minted = await this.post(
      '/api/v1/voice/sessions',
      { assistantId: this.assistantId, capabilities: ['heartbeat', 'playback_gate'] },
      { authorization: `Bearer ${this.apiKey}` },
    );
    if (minted.status !== 200) throw new Error(`mint answered ${minted.status}: ${JSON.stringify(minted.body)}`);
    this.sessionId = minted.body.sessionId;
    this.controlToken = minted.body.controlToken;
    const streamUrl: string = minted.body.stream.url;
    if (!streamUrl.startsWith(this.proxyUrl.replace(/^http/, 'ws')))
      throw new Error(`stream url does not point at the proxy: ${streamUrl}`);
    this.gateDone = this.readGate();
    await this.openMedia(streamUrl);
    this.mediaTimer = setInterval(() => {
      if (this.media?.readyState === WebSocket.OPEN) {
        this.media.send(FRAME, { binary: true });
        this.mediaFramesSent++;
      }
    }, 100);
    const every = Number(minted.body.heartbeatIntervalMs ?? 1000);
    const beat = async () => {
      const answer = await this.post(`/api/v1/voice/sessions/${this.sessionId}/heartbeat`, {
        token: this.controlToken,
      }).catch((err: Error) => ({ status: 0, body: { code: err.message } }));
      const seen: HeartbeatSeen = { status: answer.status, body: answer.body };
      this.heartbeats.push(seen);
      if (answer.status === 200 && (answer.body?.status === 'lost' || answer.body?.status === 'ended')) {
        this.over = seen;
        return;
      }
      if (this.heartbeatTimer !== undefined) this.heartbeatTimer = setTimeout(() => void beat(), every);
    };
    this.heartbeatTimer = setTimeout(() => void beat(), every);
  }

  private openMedia(url: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      this.media = ws;
      ws.on('message', () => this.mediaMessages++);
      ws.once('unexpected-response', (_req, res) => {
        this.statuses.push(res.statusCode ?? 0);
        reject(new Error(`media upgrade answered ${res.statusCode}`));
      });
      ws.once('error', reject);
      ws.once('open', () => {
        this.statuses.push(101);
        resolve();
      });
      ws.once('close', (code, reason) => (this.mediaClose = { code, reason: reason.toString() }));
    });
  }

  private async readGate(): Promise<void> {
    try {
      const res = await fetch(`${this.proxyUrl}/api/v1/voice/sessions/${this.sessionId}/gate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: this.controlToken }),
        signal: this.abort.signal,
      });
      this.statuses.push(res.status);
      if (res.status !== 200 || res.body === null) return;
      const decoder = new TextDecoder();
      let rest = '';
      for await (const chunk of res.body) {
        rest += decoder.decode(chunk as Uint8Array, { stream: true });
        const lines = rest.split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') this.gateLines.push(JSON.parse(line));
      }
    } catch (err) {
      if (!this.abort.signal.aborted) this.gateError = (err as Error).message;
    }
  }

  /** Stop the loops (the caller hangs up its side). */
  private quiet(): void {
    if (this.heartbeatTimer !== undefined) clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    if (this.mediaTimer !== undefined) clearInterval(this.mediaTimer);
    this.mediaTimer = undefined;
  }

  /** Hang up: POST end with the key (also the final answer of a call that is already over), close the media socket. */
  async end(): Promise<EndSeen> {
    this.quiet();
    const answer = await this.post(
      `/api/v1/voice/sessions/${this.sessionId}/end`,
      {},
      { authorization: `Bearer ${this.apiKey}` },
    );
    if (answer.status !== 200) throw new Error(`end answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    this.ended = answer.body as EndSeen;
    this.media?.close(1000);
    await Promise.race([this.gateDone, new Promise((resolve) => setTimeout(resolve, 3000))]);
    this.abort.abort();
    return this.ended;
  }

  /** Tear down without asking the service anything (test teardown). */
  dispose(): void {
    this.quiet();
    this.abort.abort();
    this.media?.terminate();
  }
}

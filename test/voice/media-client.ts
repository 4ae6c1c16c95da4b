import WebSocket from 'ws';
import type { TestApp } from '../helpers/app.js';
import type { Minted } from './helpers.js';

/** What a test's caller saw on its media socket, in arrival order. */
export interface MediaEvent {
  kind: 'binary' | 'text';
  data: Buffer;
  json?: any;
}

export interface MediaClient {
  ws: WebSocket;
  events: MediaEvent[];
  closed: Promise<{ code: number; reason: string }>;
  texts(type?: string): any[];
  binaryBytes(): number;
  send(pcm: Buffer): void;
  sendText(text: string): void;
  /** Resolves with the first text event matching `pred` (already received or future). */
  waitText(pred: (e: any) => boolean, what: string, timeoutMs?: number): Promise<any>;
}

export function mediaUrl(app: TestApp, minted: Minted, token = minted.controlToken, base = app.url): string {
  return `${base.replace(/^http/, 'ws')}/api/v1/voice/sessions/${minted.sessionId}/stream?token=${encodeURIComponent(token)}`;
}

/** Opens the media socket and waits for it to open; rejects with the HTTP status of a refused upgrade. */
export function openMedia(url: string): Promise<MediaClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.binaryType = 'nodebuffer';
    const events: MediaEvent[] = [];
    const waiters: Array<{ pred: (e: any) => boolean; resolve: (e: any) => void }> = [];
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const event: MediaEvent = isBinary
        ? { kind: 'binary', data }
        : { kind: 'text', data, json: JSON.parse(data.toString('utf8')) };
      events.push(event);
      if (event.json !== undefined) {
        for (const w of [...waiters]) {
          if (w.pred(event.json)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(event.json);
          }
        }
      }
    });
    const closed = new Promise<{ code: number; reason: string }>((res) =>
      ws.once('close', (code, reason) => res({ code, reason: reason.toString() })),
    );
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () =>
        reject(
          Object.assign(new Error(`upgrade refused: ${res.statusCode}`), {
            status: res.statusCode,
            headers: res.headers,
            body: body ? JSON.parse(body) : undefined,
          }),
        ),
      );
    });
    ws.once('error', (err) => reject(err));
    ws.once('open', () =>
      resolve({
        ws,
        events,
        closed,
        texts: (type) =>
          events.filter((e) => e.json !== undefined && (type === undefined || e.json.type === type)).map((e) => e.json),
        binaryBytes: () => events.filter((e) => e.kind === 'binary').reduce((n, e) => n + e.data.length, 0),
        send: (pcm) => ws.send(pcm, { binary: true }),
        sendText: (text) => ws.send(text, { binary: false }),
        waitText: (pred, what, timeoutMs = 10_000) => {
          const found = events.find((e) => e.json !== undefined && pred(e.json));
          if (found) return Promise.resolve(found.json);
          return new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), timeoutMs);
            waiters.push({ pred, resolve: (e) => (clearTimeout(timer), res(e)) });
          });
        },
      }),
    );
  });
}

/** A 440 Hz-ish square wave at speech level (the simulator hears "speech"), `frames` x 20 ms. */
export function speechFrames(frames: number): Buffer[] {
  const out: Buffer[] = [];
  for (let f = 0; f < frames; f++) {
    const pcm = Buffer.alloc(960);
    for (let i = 0; i < 480; i++) pcm.writeInt16LE(i % 40 < 20 ? 8000 : -8000, i * 2);
    out.push(pcm);
  }
  return out;
}

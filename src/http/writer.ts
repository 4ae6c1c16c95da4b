import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from 'uWebSockets.js';
import type { Logger } from '../log/index.js';
import type { Reply, StreamSink } from './types.js';

const statusLines = new Map<number, string>();
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines.set(status, line);
  }
  return line;
}

/** Per-response state shared by the router, the writer and the abort handler. */
export class ResponseState {
  aborted = false;
  finished = false;
  // Created on first use: most requests finish without anyone asking for their signal, and an AbortController
  // per request was ~7% of the shell's CPU on GET /healthz.
  private abortController: AbortController | undefined;
  private abortHooks: Array<() => void> | undefined;
  private drainWaiter: ((ok: boolean) => void) | undefined;

  constructor(readonly res: HttpResponse) {}

  get controller(): AbortController {
    if (this.abortController === undefined) {
      this.abortController = new AbortController();
      if (this.aborted) this.abortController.abort();
    }
    return this.abortController;
  }

  /** Aborted when the client goes away. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Called from uWS onAborted: the response may never be touched again. */
  markAborted(): void {
    this.aborted = true;
    this.abortController?.abort();
    const hooks = this.abortHooks;
    this.abortHooks = undefined;
    if (hooks !== undefined) for (const hook of hooks) hook();
    this.resolveDrain(false);
  }

  onAbort(hook: () => void): void {
    if (this.aborted) hook();
    else (this.abortHooks ??= []).push(hook);
  }

  get open(): boolean {
    return !this.aborted && !this.finished;
  }

  waitForDrain(): Promise<boolean> {
    return new Promise((resolve) => {
      this.drainWaiter = resolve;
    });
  }

  resolveDrain(ok: boolean): void {
    const waiter = this.drainWaiter;
    this.drainWaiter = undefined;
    waiter?.(ok);
  }
}

function writeHeaders(res: HttpResponse, headers: Record<string, string> | undefined): void {
  if (!headers) return;
  for (const key in headers) res.writeHeader(key, headers[key]!);
}

/** Status line, the shared headers, the reply's own and its cookies; call inside a cork. */
function writeHead(
  res: HttpResponse,
  status: number,
  common: Record<string, string>,
  own: Record<string, string> | undefined,
  cookies: readonly string[],
): void {
  res.writeStatus(statusLine(status));
  writeHeaders(res, common);
  writeHeaders(res, own);
  for (const cookie of cookies) res.writeHeader('set-cookie', cookie);
}

/**
 * Writes a complete (non-stream) reply in one corked call (docs/house-rules.md rule 16). Does nothing when the client
 * has gone away or the response was already finished.
 */
export function writeReply(
  state: ResponseState,
  reply: Exclude<Reply, { kind: 'stream' | 'sized' }>,
  common: Record<string, string>,
  cookies: readonly string[],
  closeConnection = false,
): void {
  if (!state.open) return;
  state.finished = true;
  const res = state.res;
  res.cork(() => {
    writeHead(res, reply.status, common, reply.headers, cookies);
    switch (reply.kind) {
      case 'json':
        res.writeHeader('content-type', 'application/json; charset=utf-8');
        res.end(JSON.stringify(reply.body), closeConnection);
        break;
      case 'bytes':
        res.writeHeader('content-type', reply.contentType);
        res.end(reply.body, closeConnection);
        break;
      case 'empty':
        if (reply.status === 204 || reply.status === 304) res.endWithoutBody(0, closeConnection);
        else res.end(undefined, closeConnection);
        break;
    }
  });
}

/**
 * Streams a reply. Each write is corked; when uWS reports backpressure the producer waits for
 * onWritable, so a slow reader holds the producer back instead of growing memory.
 */
export async function writeStream(
  state: ResponseState,
  reply: Extract<Reply, { kind: 'stream' }>,
  common: Record<string, string>,
  cookies: readonly string[],
  log: Logger,
): Promise<void> {
  if (!state.open) return;
  const res = state.res;
  res.cork(() => {
    writeHead(res, reply.status, common, reply.headers, cookies);
    res.writeHeader('content-type', reply.contentType);
  });
  res.onWritable(() => {
    state.resolveDrain(true);
    return true;
  });
  const sink: StreamSink = {
    signal: state.controller.signal,
    get closed() {
      return !state.open;
    },
    write(chunk) {
      if (!state.open) return Promise.resolve(false);
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      return ok ? Promise.resolve(true) : state.waitForDrain();
    },
  };
  try {
    await reply.run(sink);
  } catch (err) {
    log.error({ err }, 'stream producer failed');
  }
  if (!state.open) return;
  state.finished = true;
  res.cork(() => res.end());
}

/**
 * Writes a body of known length (Content-Length) as the producer supplies it: each chunk goes through uWS tryEnd;
 * when the socket is full the producer waits for onWritable and the rest of the chunk is retried from the offset
 * uWS reports (the uWS streaming example). Nothing is buffered here beyond the chunk in hand.
 */
export async function writeSized(
  state: ResponseState,
  reply: Extract<Reply, { kind: 'sized' }>,
  common: Record<string, string>,
  cookies: readonly string[],
  log: Logger,
): Promise<void> {
  if (!state.open) return;
  const res = state.res;
  const total = reply.length;
  if (total === 0) {
    state.finished = true;
    res.cork(() => {
      writeHead(res, reply.status, common, reply.headers, cookies);
      res.writeHeader('content-type', reply.contentType);
      res.end();
    });
    return;
  }
  let headersWritten = false;
  let written = 0;
  let waiting: { chunk: Uint8Array; startOffset: number; resolve: (ok: boolean) => void } | undefined;
  const settle = (ok: boolean) => {
    const w = waiting;
    waiting = undefined;
    w?.resolve(ok);
  };
  state.onAbort(() => settle(false));
  const attempt = (chunk: Uint8Array): [boolean, boolean] => {
    const [ok, done] = res.tryEnd(chunk, total);
    if (done) state.finished = true;
    return [ok, done];
  };
  res.onWritable((offset) => {
    const w = waiting;
    if (w === undefined) return true;
    const [ok, done] = attempt(w.chunk.subarray(offset - w.startOffset));
    if (ok || done) settle(true);
    return ok;
  });
  const sink: StreamSink = {
    signal: state.controller.signal,
    get closed() {
      return !state.open;
    },
    write(data) {
      if (!state.open) return Promise.resolve(false);
      const chunk = typeof data === 'string' ? Buffer.from(data) : data;
      if (written + chunk.length > total)
        return Promise.reject(new Error('sized reply: the producer wrote more than its declared length'));
      written += chunk.length;
      let result: [boolean, boolean] = [false, false];
      let startOffset = 0;
      res.cork(() => {
        if (!headersWritten) {
          headersWritten = true;
          writeHead(res, reply.status, common, reply.headers, cookies);
          res.writeHeader('content-type', reply.contentType);
        }
        startOffset = res.getWriteOffset();
        result = attempt(chunk);
      });
      if (result[0] || result[1]) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        waiting = { chunk, startOffset, resolve };
      });
    },
  };
  try {
    await reply.run(sink);
  } catch (err) {
    log.error({ err }, 'sized producer failed');
  }
  if (!state.open) return;
  // The producer stopped short of the length it declared: the body cannot be completed, so the connection goes.
  log.error({ written, total }, 'sized reply ended short; closing the connection');
  state.finished = true;
  res.close();
}

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
  readonly controller = new AbortController();
  private abortHooks: Array<() => void> = [];
  private drainWaiter: ((ok: boolean) => void) | undefined;

  constructor(readonly res: HttpResponse) {}

  /** Called from uWS onAborted: the response may never be touched again. */
  markAborted(): void {
    this.aborted = true;
    this.controller.abort();
    for (const hook of this.abortHooks) hook();
    this.abortHooks = [];
    this.resolveDrain(false);
  }

  onAbort(hook: () => void): void {
    if (this.aborted) hook();
    else this.abortHooks.push(hook);
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

/**
 * Writes a complete (non-stream) reply in one corked call (uWS rule 3). Does nothing when the client
 * has gone away or the response was already finished.
 */
export function writeReply(state: ResponseState, reply: Exclude<Reply, { kind: 'stream' }>, common: Record<string, string>, cookies: string[], closeConnection = false): void {
  if (!state.open) return;
  state.finished = true;
  const res = state.res;
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    writeHeaders(res, common);
    writeHeaders(res, reply.headers);
    for (const cookie of cookies) res.writeHeader('set-cookie', cookie);
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
  cookies: string[],
  log: Logger,
): Promise<void> {
  if (!state.open) return;
  const res = state.res;
  res.cork(() => {
    res.writeStatus(statusLine(reply.status));
    writeHeaders(res, common);
    writeHeaders(res, reply.headers);
    for (const cookie of cookies) res.writeHeader('set-cookie', cookie);
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

/**
 * The Parley callers of the load generator are the SDK's VoiceCall (sdk/src/voice/call.ts), the same client as the
 * example, the widget and parley-loadtest: mint over HTTP with an API key (voice scope, capabilities heartbeat +
 * playback_gate), media WebSocket at `stream.url`, a heartbeat every heartbeatIntervalMs, one gate NDJSON stream held
 * open, end on the way out. This file only adapts it to the bench: a `ws` socket without compression that stays on
 * loopback and hands assistant audio over as the Buffer `ws` already holds (no copy per chunk).
 */
import { WebSocket } from 'ws';
import { ParleyError } from '../../sdk/src/errors.js';
import { VoiceCall } from '../../sdk/src/voice/call.js';
import { assertLoopback } from '../harness/children.js';

export interface ParleyTarget {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  apiKey: string;
  assistantId: string;
}

/** A refusal that means "this part of Parley does not exist yet" rather than "it is broken". */
export class NotBuiltYet extends Error {}

/**
 * `ws` for VoiceCall: per-message compression off (PCM barely compresses; deflate would load the generator), loopback
 * only, and binary messages kept as `nodebuffer`. VoiceCall asks for `arraybuffer` (what browsers offer); `ws` then
 * copies every chunk out of its read buffer into a fresh ArrayBuffer. VoiceCall accepts any byte view, so the bench
 * keeps the Buffer.
 */
class BenchWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    assertLoopback(url);
    super(url, protocols, { perMessageDeflate: false });
    Object.defineProperty(this, 'binaryType', { get: () => 'nodebuffer', set: () => undefined });
  }
}

/** A VoiceCall for one bench caller; start() it. */
export function parleyCall(target: ParleyTarget): VoiceCall {
  assertLoopback(target.baseUrl);
  return new VoiceCall({
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    assistantId: target.assistantId,
    WebSocket: BenchWebSocket,
  });
}

/** VoiceCall.start(), with "the voice routes are not registered" told apart from a failure. */
export async function startCall(call: VoiceCall): Promise<void> {
  try {
    await call.start();
  } catch (err) {
    if (err instanceof ParleyError && err.status === 404 && err.code === 'HTTP_NOT_FOUND') {
      throw new NotBuiltYet('POST /api/v1/voice/sessions answered 404 (route not registered)');
    }
    throw err;
  }
}

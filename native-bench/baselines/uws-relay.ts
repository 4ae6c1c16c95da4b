/**
 * Bare uWS relay: uWebSockets.js for the caller side plus Parley's own GPT-Live adapter (`createVoiceProvider`) per
 * caller, and nothing else: no mint, auth, heartbeats, gate, ownership or metering. The gap between this and Parley
 * is the cost of Parley's control plane; the gap between this and ws-relay is the transport and codec.
 *
 *   node --import tsx native-bench/baselines/uws-relay.ts --simulator ws://127.0.0.1:PORT/v1/live/sessions
 *
 * Prints ws://127.0.0.1:PORT/relay first on stdout; sends {"type":"ready"} once the provider session started.
 */
import { parseArgs } from 'node:util';
import { App, us_socket_local_port, type WebSocket } from 'uWebSockets.js';
import { createVoiceProvider, type VoiceSession } from '../../src/providers/voice/index.js';

const { values } = parseArgs({ options: { simulator: { type: 'string' }, port: { type: 'string', default: '0' } } });
if (values.simulator === undefined) throw new Error('--simulator ws://... is required');

const provider = createVoiceProvider({ kind: 'simulator', url: values.simulator, keepaliveMs: 0 });
const CALLER_HIGH_WATER = 256 * 1024;

interface CallerData {
  session: VoiceSession | undefined;
  closed: boolean;
}

App()
  .ws<CallerData>('/relay', {
    compression: 0,
    maxPayloadLength: 64 * 1024,
    idleTimeout: 0,
    maxBackpressure: 1024 * 1024,
    upgrade: (res, req, context) => {
      res.upgrade<CallerData>(
        { session: undefined, closed: false },
        req.getHeader('sec-websocket-key'),
        req.getHeader('sec-websocket-protocol'),
        req.getHeader('sec-websocket-extensions'),
        context,
      );
    },
    open: (ws: WebSocket<CallerData>) => {
      const data = ws.getUserData();
      provider
        .startSession(
          {},
          {
            handlers: {
              onOutputAudio(pcm) {
                if (data.closed || ws.getBufferedAmount() > CALLER_HIGH_WATER) return;
                ws.cork(() => ws.send(pcm, true));
              },
              onClosed() {
                if (!data.closed) ws.end(1000);
              },
            },
          },
        )
        .then(
          (session) => {
            if (data.closed) return void session.close();
            data.session = session;
            ws.cork(() => ws.send('{"type":"ready"}'));
          },
          () => {
            if (!data.closed) ws.end(1011, 'provider unavailable');
          },
        );
    },
    message: (ws, message, isBinary) => {
      if (!isBinary) return;
      // The adapter encodes to base64 synchronously, so the uWS-owned ArrayBuffer may be viewed, not copied.
      ws.getUserData().session?.sendAudio(Buffer.from(message));
    },
    close: (ws) => {
      const data = ws.getUserData();
      data.closed = true;
      void data.session?.close();
    },
  })
  .any('/*', (res) => {
    res.writeStatus('426 Upgrade Required').end();
  })
  .listen('127.0.0.1', Number(values.port), (socket) => {
    if (!socket) throw new Error('uws-relay could not listen');
    process.stdout.write(`ws://127.0.0.1:${us_socket_local_port(socket as never)}/relay\n`);
  });
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));

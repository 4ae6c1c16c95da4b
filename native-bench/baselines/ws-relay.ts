/**
 * Baseline relay "written the usual way": node:http + `ws`, one upstream GPT-Live session per caller, JSON.stringify
 * for every append and JSON.parse for every provider event. Same protocol translation as Parley's relay:
 * session.start with the data-channel lock, wait for session.started (lock echoed), caller PCM ->
 * session.input_audio.append (base64), session.output_audio.delta -> binary PCM to the caller.
 *
 *   node --import tsx native-bench/baselines/ws-relay.ts --simulator ws://127.0.0.1:PORT/v1/live/sessions
 *
 * Prints its caller URL (ws://127.0.0.1:PORT/relay) as the first stdout line. Callers get a text frame
 * {"type":"ready"} once the provider session started; audio sent earlier is buffered.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

const { values } = parseArgs({ options: { simulator: { type: 'string' }, port: { type: 'string', default: '0' } } });
if (values.simulator === undefined) throw new Error('--simulator ws://... is required');
const simulatorUrl = values.simulator;

/** Above this many bytes waiting on the caller socket, assistant audio is dropped (a slow caller must not grow memory). */
const CALLER_HIGH_WATER = 256 * 1024;

const http = createServer((_req, res) => {
  res.writeHead(426).end();
});
const wss = new WebSocketServer({ server: http, path: '/relay', perMessageDeflate: false, maxPayload: 64 * 1024 });

wss.on('connection', (caller) => {
  const upstream = new WebSocket(simulatorUrl, { perMessageDeflate: false });
  let started = false;
  const pending: Buffer[] = [];

  upstream.on('open', () => {
    upstream.send(
      JSON.stringify({
        type: 'session.start',
        session: {
          model: 'gpt-live-1',
          client: { data_channel: { allowed_client_events: [] } },
          audio: { format: { type: 'audio/pcm', rate: 24000 } },
        },
      }),
    );
  });
  upstream.on('message', (data: RawData) => {
    const event = JSON.parse(data.toString()) as {
      type: string;
      delta?: string;
      session?: { client?: { data_channel?: { allowed_client_events?: unknown } } };
    };
    if (event.type === 'session.output_audio.delta' && typeof event.delta === 'string') {
      if (caller.readyState === WebSocket.OPEN && caller.bufferedAmount < CALLER_HIGH_WATER) {
        caller.send(Buffer.from(event.delta, 'base64'), { binary: true });
      }
    } else if (event.type === 'session.started') {
      const allowed = event.session?.client?.data_channel?.allowed_client_events;
      if (!Array.isArray(allowed) || allowed.length > 0) {
        caller.close(1011, 'provider lock not confirmed');
        upstream.close();
        return;
      }
      started = true;
      for (const frame of pending.splice(0)) sendAudio(frame);
      caller.send(JSON.stringify({ type: 'ready' }));
    }
  });
  function sendAudio(pcm: Buffer): void {
    upstream.send(JSON.stringify({ type: 'session.input_audio.append', audio: pcm.toString('base64') }));
  }
  caller.on('message', (data: RawData, isBinary) => {
    if (!isBinary) return; // control text from callers never reaches the provider
    const pcm = data as Buffer;
    if (started) sendAudio(pcm);
    else pending.push(pcm);
  });
  caller.on('close', () => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(JSON.stringify({ type: 'session.close' }));
    upstream.close();
  });
  upstream.on('close', () => caller.close());
  upstream.on('error', () => caller.terminate());
  caller.on('error', () => upstream.terminate());
});

http.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/relay\n`);
});
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));

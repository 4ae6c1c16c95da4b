import t from 'tap';
import { WebSocket } from 'ws';
import {
  FRAME_BYTES,
  ParleyError,
  syntheticSpeech,
  VoiceCall,
  type Transcript,
  type VoiceCallState,
} from '../../sdk/src/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOwner, type TestOwner } from '../helpers/identity.js';
import { ORIGIN, voiceAssistant, waitFor } from '../voice/helpers.js';

/** The SDK's VoiceCall against a real Parley (real Postgres, Redis, media relay) and the GPT-Live simulator. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Streams PCM in 20 ms frames on a drift-free real-time schedule. */
async function speakInto(call: VoiceCall, pcm: Uint8Array): Promise<number> {
  const started = performance.now();
  let sent = 0;
  for (
    let offset = 0, n = 0;
    offset + FRAME_BYTES <= pcm.length && !['ended', 'error'].includes(call.state);
    offset += FRAME_BYTES, n++
  ) {
    const wait = started + n * 20 - performance.now();
    if (wait > 0) await sleep(wait);
    if (call.sendAudio(pcm.subarray(offset, offset + FRAME_BYTES))) sent++;
  }
  return sent;
}

function record(call: VoiceCall) {
  const states: VoiceCallState[] = [];
  const transcripts: Transcript[] = [];
  const errors: Error[] = [];
  let audioBytes = 0;
  call.on('state', ({ state }) => states.push(state));
  call.on('transcript', (x) => transcripts.push(x));
  call.on('audio', (pcm) => (audioBytes += pcm.byteLength));
  call.on('error', (e) => errors.push(e));
  return { states, transcripts, errors, audio: () => audioBytes };
}

/** One service for every case here (each case makes its own assistant); heartbeats every second. */
let shared: Promise<{ app: TestApp; owner: TestOwner }> | undefined;
function setup() {
  shared ??= (async () => {
    const app = await startTestApp(t, { env: { VOICE_HEARTBEAT_INTERVAL_MS: '1000' } });
    return { app, owner: await createOwner(app.database.sql) };
  })();
  return shared;
}

function keyed(
  app: TestApp,
  owner: TestOwner,
  assistantId: string,
  extra: Partial<ConstructorParameters<typeof VoiceCall>[0]> = {},
) {
  return new VoiceCall({ baseUrl: app.url, apiKey: owner.secret, assistantId, WebSocket, ...extra });
}

t.test('a whole call with an API key: speech in, captions, gated assistant audio, heartbeats, end', async (t) => {
  const { app, owner } = await setup();
  const assistant = await voiceAssistant(app, owner);
  const call = keyed(app, owner, assistant.publicId);
  const seen = record(call);
  const ended = new Promise((resolve) => call.on('ended', resolve));
  const minted = await call.start();
  t.match(minted, {
    sessionId: /^vs_/,
    controlToken: /.+/,
    heartbeatIntervalMs: 1000,
    stream: { protocol: 'parley.voice.v1' },
  });
  t.equal(call.state, 'listening', 'connected and listening');

  await speakInto(call, syntheticSpeech({ utterances: 1, speechMs: 1000, pauseMs: 900 }));
  await waitFor(
    () => seen.transcripts.some((x) => x.role === 'assistant') && seen.audio() > 0,
    'the assistant answers',
    15_000,
  );
  // Keep the microphone open (silence) until the answer has played and a few heartbeats went by.
  const silence = new Uint8Array(FRAME_BYTES);
  for (let i = 0; i < 500 && (call.stats.heartbeats < 2 || call.state !== 'listening'); i++) {
    call.sendAudio(silence);
    await sleep(20);
  }
  t.equal(call.state, 'listening', 'back to listening once the answer has played');
  t.ok(
    seen.transcripts.some((x) => x.role === 'user'),
    "the caller's words came back as captions",
  );
  t.ok(call.stats.gateDecisions >= 2, 'gate decisions followed from the NDJSON stream');
  t.ok(call.stats.heartbeats >= 2, `heartbeats sent at the minted interval (${call.stats.heartbeats})`);
  t.equal(call.stats.assistantBytesMuted, 0, 'no assistant audio arrived while the gate was closed');
  t.type(call.stats.mintMs, 'number');
  t.type(call.stats.firstAudioMs, 'number');
  t.ok(
    seen.states.indexOf('speaking') > seen.states.indexOf('listening'),
    `the state went through speaking (${seen.states.join(' > ')})`,
  );
  t.equal(seen.states[0], 'connecting');

  const answer = await call.end();
  t.match(answer, { sessionId: minted.sessionId, endReason: null, billableSeconds: Number });
  t.match(await ended, { endReason: null, by: 'client' });
  t.equal(call.state, 'ended');
  t.same(await call.end(), answer, 'end() again answers the same');
  t.equal(call.sendAudio(silence), false, 'no audio after the end');
  t.same(seen.errors, []);
});

t.test(
  'keyless (Origin + public id + visitor): a newer session of the same visitor ends the older one, superseded',
  async (t) => {
    const { app, owner } = await setup();
    const assistant = await voiceAssistant(app, owner);
    const widget = (visitorId: string) =>
      new VoiceCall({
        baseUrl: app.url,
        assistantId: assistant.publicId,
        visitorId,
        recordingConsent: true,
        headers: { origin: ORIGIN },
        WebSocket,
      });
    const first = widget('visitor-sdk-0001');
    const firstEnded = new Promise<{ endReason: unknown; by: string }>((resolve) => first.on('ended', resolve));
    await first.start();
    const second = widget('visitor-sdk-0001');
    await second.start();
    t.match(await firstEnded, { endReason: 'superseded', by: 'service' }, 'the older call learns it was superseded');
    t.equal(first.state, 'ended');
    t.equal(second.state, 'listening');
    t.match(await second.end(), { endReason: null });

    const stranger = new VoiceCall({
      baseUrl: app.url,
      assistantId: assistant.publicId,
      visitorId: 'visitor-sdk-0002',
      recordingConsent: true,
      headers: { origin: 'https://evil.example' },
      WebSocket,
    });
    const refused = await stranger.start().catch((e: unknown) => e);
    t.ok(refused instanceof ParleyError);
    t.match(refused, { status: 403 });
    t.equal(stranger.state, 'error');
  },
);

t.test(
  'a client without playback_gate is refused 403 client_update_required; a missing WebSocket is a clear error',
  async (t) => {
    const { app, owner } = await setup();
    const assistant = await voiceAssistant(app, owner);
    const old = keyed(app, owner, assistant.publicId, { capabilities: ['heartbeat'] });
    t.match(await old.start().catch((e: unknown) => e), {
      status: 403,
      reason: 'client_update_required',
      requestId: /.+/,
    });
    const noSocket = new VoiceCall({
      baseUrl: app.url,
      apiKey: owner.secret,
      assistantId: assistant.publicId,
      WebSocket: undefined as never,
    });
    if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'undefined') {
      await t.rejects(noSocket.start(), /No WebSocket implementation/);
    } else {
      t.comment('this Node has a global WebSocket: the missing-implementation message is not reachable here');
    }
  },
);

t.test(
  'the provider link drops mid-call: reconnecting (media state, degraded heartbeats), then listening again',
  async (t) => {
    const { app, owner } = await setup();
    const assistant = await voiceAssistant(app, owner, { instructions: 'Be brief. [sim:drop-after=400]' });
    const call = keyed(app, owner, assistant.publicId);
    const seen = record(call);
    const heartbeats: string[] = [];
    call.on('heartbeat', (h) => heartbeats.push(h.status));
    await call.start();
    await waitFor(() => seen.states.includes('reconnecting'), 'reconnecting', 10_000);
    await waitFor(() => call.state === 'listening', 'listening again', 15_000);
    t.ok(
      seen.states.indexOf('reconnecting') < seen.states.lastIndexOf('listening'),
      `states: ${seen.states.join(' > ')}`,
    );
    t.comment(`heartbeats: ${heartbeats.join(', ')}`);
    await call.end();
  },
);

t.test('endOnUnload: a keepalive end the page does not wait for', async (t) => {
  const { app, owner } = await setup();
  const assistant = await voiceAssistant(app, owner);
  const call = keyed(app, owner, assistant.publicId);
  const minted = await call.start();
  t.equal(call.endOnUnload(), true);
  t.equal(call.state, 'ended');
  t.equal(call.endOnUnload(), false, 'nothing left to end');
  await waitFor(() => !app.app.voice.sessions.get(minted.sessionId), 'the service ended the session');
  t.pass('the session is over at the service');
});

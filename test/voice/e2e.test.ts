import { existsSync } from 'node:fs';
import t from 'tap';
import { readWavHeader, recordingLinksOf } from '../../src/voice/index.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import {
  endWithKey,
  live,
  mintWithKey,
  ndjsonReader,
  openGate,
  ownerWithVoice,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';
import { mediaUrl, openMedia, speechFrames } from './media-client.js';

/**
 * The whole voice path against the real provider simulator, real Postgres and Redis: mint -> media socket ->
 * audio both ways with the gate honoured -> transcripts in the conversation -> end -> usage settled and shown in
 * the usage summary; the recording exists (with consent), only its owner can fetch it, with Range.
 */

t.test('a recorded call from mint to usage summary', async (t) => {
  const app = await startVoiceApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true } });
  const minted = await mintWithKey(app, owner, assistant, { recordingConsent: true });
  t.same(minted.recording, { enabled: true, consented: true });

  const gate = ndjsonReader(await openGate(app, minted));
  t.match(await gate.next(), { type: 'gate', seq: 0, state: 'closed', reason: 'start' });

  const media = await openMedia(mediaUrl(app, minted));
  t.same(await media.waitText((e) => e.type === 'state', 'the first state'), {
    type: 'state',
    link: 'connected',
    gate: 'closed',
    gateSeq: 0,
    muted: false,
  });

  // Two words of speech, then silence: the simulator transcribes the words and answers with three of its own.
  for (const frame of speechFrames(40)) media.send(frame);
  for (let i = 0; i < 40; i++) media.send(Buffer.alloc(960));
  const userWords = await waitFor(
    () => (media.texts('transcript').filter((e) => e.role === 'user').length >= 2 ? true : undefined),
    "the caller's words",
  );
  t.ok(userWords);
  await media.waitText((e) => e.type === 'transcript' && e.role === 'assistant', "the assistant's words");
  await waitFor(
    () => (media.binaryBytes() >= 960 * 12 * 3 ? true : undefined),
    "the assistant's audio (3 words of 240 ms)",
  );

  // The gate, honoured: the caller heard nothing before the gate opened, and the gate stream agrees.
  const firstBinary = media.events.findIndex((e) => e.kind === 'binary');
  const opened = media.events.findIndex((e) => e.json?.type === 'state' && e.json.gate === 'open');
  t.ok(opened >= 0 && opened < firstBinary, 'the state "gate open" came before the first assistant audio frame');
  const decisions: any[] = [];
  for (
    let line = await gate.next();
    line !== null && !(line.type === 'gate' && line.state === 'open');
    line = await gate.next()
  )
    decisions.push(line);
  t.match(
    decisions,
    [{ type: 'gate', state: 'closed', reason: 'user_speaking' }],
    'the visitor spoke (closed), then the answer (open)',
  );
  const relay = app.app.voice.media!.relays.get(minted.sessionId)!;
  t.equal(relay.stats.callerFrames, 80, 'every caller frame crossed the relay');
  t.equal(relay.stats.assistantWithheldBytes, 0, 'the simulator only speaks after its transcript opened the gate');

  const end = await endWithKey(app, owner, minted.sessionId);
  t.match(end.body, { sessionId: minted.sessionId, status: 'ended', endReason: null, usageFinalized: true });
  t.same(await media.waitText((e) => e.type === 'ended', 'the ended event'), { type: 'ended', endReason: null });
  t.equal((await media.closed).code, 1000, 'the media socket closes normally after the end');
  t.match(await gate.next(), { type: 'end', endReason: null });

  // Transcripts are the conversation's messages.
  const messages = await app.database.sql<{ role: string; content: string }[]>`
    select role, content from messages where conversation_id = ${minted.conversationId} order by seq`;
  t.ok(
    messages.some((m) => m.role === 'user') && messages.some((m) => m.role === 'assistant'),
    'both sides of the call are in the conversation',
  );
  const spoken = media
    .texts('transcript')
    .filter((e) => e.role === 'assistant')
    .map((e) => e.text)
    .join(' ');
  t.ok(
    messages.some((m) => m.role === 'assistant' && m.content.includes(spoken.split(' ')[0]!)),
    'what the caller saw is what was stored',
  );

  // Usage: settled once from the provider's final figure, visible in the summary.
  const cookie = await login(app.url, owner.email, owner.password);
  const summary = (await (
    await fetch(`${app.url}/api/v1/account/usage/summary`, { headers: dashboardHeaders(app.url, cookie) })
  ).json()) as any;
  t.match(summary.summary.voice, {
    voiceSecondsUsed: end.body.billableSeconds,
    voiceSecondsLimit: 600,
    voiceSecondsReserved: 0,
    playgroundVoiceSeconds: 0,
  });
  t.ok(end.body.billableSeconds >= 1, 'the call took at least a second');
  const grants = await app.database
    .sql`select status from usage_reservations where voice_session_id = ${minted.sessionId}`;
  t.same(
    grants.map((g) => g.status),
    ['settled'],
    'one grant, settled',
  );
  const [balance] = await app.database
    .sql`select voice_cost_micros from usage_balances where account_id = ${owner.accountId}`;
  t.ok(Number(balance!.voiceCostMicros) > 0, "the provider cost is in the account's spend");

  // The recording: only with consent, only for the owner's dashboard session, with Range.
  const recordingPath = `/api/assistants/${assistant.publicId}/voice/recordings/${minted.sessionId}`;
  const full = (await waitFor(async () => {
    const res = await fetch(`${app.url}${recordingPath}`, { headers: { cookie } });
    if (res.status === 404) return void (await res.arrayBuffer());
    return res;
  }, 'the recording to be written'))!;
  t.equal(full.status, 200);
  t.equal(full.headers.get('content-type'), 'audio/wav');
  t.equal(full.headers.get('accept-ranges'), 'bytes');
  const wav = Buffer.from(await full.arrayBuffer());
  t.equal(Number(full.headers.get('content-length')), wav.length);
  const header = readWavHeader(wav);
  t.match(header, { channels: 2, sampleRateHz: 24_000, bitsPerSample: 16, dataOffset: 44 });
  t.equal(header!.dataBytes, wav.length - 44);
  t.ok(header!.dataBytes >= 80 * 960 * 2, "both directions are in it (at least the caller's 1.6 s, two channels)");
  // The caller's speech is on the left channel.
  let leftPeak = 0;
  let rightPeak = 0;
  for (let i = 44; i + 3 < wav.length; i += 4) {
    leftPeak = Math.max(leftPeak, Math.abs(wav.readInt16LE(i)));
    rightPeak = Math.max(rightPeak, Math.abs(wav.readInt16LE(i + 2)));
  }
  t.equal(leftPeak, 8000, 'left: the caller');
  t.ok(rightPeak > 0, 'right: the assistant');

  const ranged = await fetch(`${app.url}${recordingPath}`, { headers: { cookie, range: 'bytes=0-43' } });
  t.equal(ranged.status, 206);
  t.equal(ranged.headers.get('content-range'), `bytes 0-43/${wav.length}`);
  t.same(Buffer.from(await ranged.arrayBuffer()), wav.subarray(0, 44), 'the header bytes');
  const tail = await fetch(`${app.url}${recordingPath}`, { headers: { cookie, range: 'bytes=-100' } });
  t.equal(tail.status, 206);
  t.same(Buffer.from(await tail.arrayBuffer()), wav.subarray(wav.length - 100));
  const middle = await fetch(`${app.url}${recordingPath}`, { headers: { cookie, range: `bytes=1000-` } });
  t.same(Buffer.from(await middle.arrayBuffer()), wav.subarray(1000));
  const beyond = await fetch(`${app.url}${recordingPath}`, { headers: { cookie, range: `bytes=${wav.length}-` } });
  t.equal(beyond.status, 416);
  t.equal(beyond.headers.get('content-range'), `bytes */${wav.length}`);
  await beyond.arrayBuffer();

  const byKey = await fetch(`${app.url}${recordingPath}`, { headers: bearer(owner.secret) });
  t.equal(byKey.status, 401, 'an API key is not a dashboard session');
  await byKey.arrayBuffer();
  const stranger = await createOwner(app.database.sql);
  const strangerCookie = await login(app.url, stranger.email, stranger.password);
  const other = await fetch(`${app.url}${recordingPath}`, { headers: { cookie: strangerCookie } });
  t.equal(other.status, 404, 'another account cannot fetch it (not even learn it exists)');
  await other.arrayBuffer();

  t.same(
    await recordingLinksOf(app.database.sql, app.app.voice.recordings!, minted.conversationId),
    [
      {
        sessionId: minted.sessionId,
        url: `/api/assistants/${assistant.id}/voice/recordings/${minted.sessionId}`,
        ready: true,
      },
    ],
    'the conversation links its recording',
  );
  const viewed = await fetch(`${app.url}/api/v1/conversations/${minted.conversationId}`, {
    headers: bearer(owner.secret),
  });
  t.equal(viewed.status, 200);
  const conversation = (await viewed.json()) as { recordings: unknown[] };
  t.same(
    conversation.recordings,
    [
      {
        sessionId: minted.sessionId,
        url: `/api/assistants/${assistant.id}/voice/recordings/${minted.sessionId}`,
        ready: true,
      },
    ],
    'the owner finds the recording on the conversation through the v1 API',
  );

  // Deleting the conversation deletes the recording: the route stops at once, the sweep removes the file.
  const wavPath = app.app.voice.recordings!.pathOf(minted.sessionId);
  await app.database.sql`delete from conversations where id = ${minted.conversationId}`;
  const gone = await fetch(`${app.url}${recordingPath}`, { headers: { cookie } });
  t.equal(gone.status, 404);
  await gone.arrayBuffer();
  t.equal(await app.app.voice.recordings!.sweep(), 1, 'the sweep deleted the file');
  t.notOk(existsSync(wavPath));
});

t.test('no consent, no file; an assistant that does not record writes nothing', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: false } });
  const notConsented = await mintWithKey(app, owner, assistant);
  t.same(notConsented.recording, { enabled: true, consented: false });
  const media = await openMedia(mediaUrl(app, notConsented));
  for (const frame of speechFrames(20)) media.send(frame);
  await waitFor(
    () => (live(app, notConsented.sessionId).provider.stats.audioFramesSent >= 20 ? true : undefined),
    'the audio to reach the provider',
  );
  t.notOk(app.app.voice.recordings!.isWriting(notConsented.sessionId), 'not recording');
  await endWithKey(app, owner, notConsented.sessionId);
  await media.closed;
  await app.app.voice.recordings!.settled();
  t.notOk(existsSync(app.app.voice.recordings!.pathOf(notConsented.sessionId)), 'no file');
  const viewed = await fetch(`${app.url}/api/v1/conversations/${notConsented.conversationId}`, {
    headers: bearer(owner.secret),
  });
  t.same(((await viewed.json()) as { recordings: unknown[] }).recordings, [], 'no recording on the conversation');
  const cookie = await login(app.url, owner.email, owner.password);
  const res = await fetch(`${app.url}/api/assistants/${assistant.id}/voice/recordings/${notConsented.sessionId}`, {
    headers: { cookie },
  });
  t.equal(res.status, 404);
  t.equal(((await res.json()) as any).code, 'VOICE_RECORDING_NOT_FOUND');
});

t.test(
  'echo mode announces itself with one transcript: the gate opens and the caller hears its own frames back',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner, { instructions: 'Echo. [sim:echo]' });
    const minted = await mintWithKey(app, owner, assistant);
    const media = await openMedia(mediaUrl(app, minted));
    await media.waitText((e) => e.type === 'state', 'the first state');
    const frame = Buffer.alloc(960);
    frame.writeUInt32LE(0xc0ffee, 0);
    media.send(frame);
    await media.waitText((e) => e.type === 'state' && e.gate === 'open', 'the gate to open');
    media.send(frame);
    await waitFor(() => (media.binaryBytes() >= 960 ? true : undefined), 'the echo');
    const heard = media.events.find((e) => e.kind === 'binary')!.data;
    t.same(heard, frame, 'the echoed frame, byte for byte');
    await endWithKey(app, owner, minted.sessionId);
  },
);

t.test('echo without a gate decision: the assistant audio is withheld, counted, never heard', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  // The simulator echoes every frame back as assistant audio and never says a word (no transcripts): the gate
  // stays closed at `start`.
  const assistant = await voiceAssistant(app, owner, { instructions: 'Echo. [sim:echo=silent]' });
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  await media.waitText((e) => e.type === 'state', 'the first state');
  for (let i = 0; i < 50; i++) media.send(Buffer.alloc(960, i));
  const stats = (await waitFor(() => {
    const r = app.app.voice.media!.relays.get(minted.sessionId);
    // Bytes, not chunks: the provider leg may coalesce caller frames (VOICE_PROVIDER_APPEND_MS), so 50 frames can
    // come back as fewer, larger chunks.
    return r !== undefined && r.stats.assistantWithheldBytes >= 50 * 960 ? r.stats : undefined;
  }, 'the echoes to come back'))!;
  t.equal(stats.assistantSentBytes, 0);
  t.equal(media.binaryBytes(), 0, 'the caller heard nothing');

  // The gate opens (a reply the assistant may speak): the echo is heard from then on.
  live(app, minted.sessionId).gate.decide('social');
  await media.waitText((e) => e.type === 'state' && e.gate === 'open', 'the gate to open');
  const frame = Buffer.alloc(960);
  frame.writeUInt32LE(0xdeadbeef, 0);
  media.send(frame);
  await waitFor(() => (media.binaryBytes() >= 960 ? true : undefined), 'the echo');
  const heard = media.events.find((e) => e.kind === 'binary')!.data;
  t.same(heard, frame, 'byte for byte what the caller sent, through the provider and back');
  await endWithKey(app, owner, minted.sessionId);
});

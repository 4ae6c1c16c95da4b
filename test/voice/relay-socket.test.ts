import t from 'tap';
import {
  endWithKey,
  heartbeat,
  live,
  mintWithKey,
  ownerWithVoice,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';
import { mediaUrl, openMedia } from './media-client.js';

/** The media WebSocket behind uWS: the upgrade's checks, one socket per session, and a slow reader. */

t.test(
  'the upgrade: wrong token 404, wrong instance 421 misrouted (before upgrading), ended session 404',
  async (t) => {
    const a = await startVoiceApp(t);
    const b = await startVoiceApp(t, { database: a.database, redisPrefix: a.redisPrefix });
    const owner = await ownerWithVoice(a);
    const assistant = await voiceAssistant(a, owner);
    const minted = await mintWithKey(a, owner, assistant);

    const badToken = await openMedia(mediaUrl(a, minted, 'v1.9999999999.AAAA')).catch((e: any) => e);
    t.equal(badToken.status, 404);
    t.equal(badToken.body.code, 'VOICE_SESSION_NOT_FOUND');
    const noToken = await openMedia(mediaUrl(a, minted, '')).catch((e: any) => e);
    t.equal(noToken.status, 404);
    const otherSession = await openMedia(mediaUrl(a, { ...minted, sessionId: 'vs_unknown000000000000000' })).catch(
      (e: any) => e,
    );
    t.equal(otherSession.status, 404, 'a token opens only its own session');

    const misrouted = await openMedia(mediaUrl(a, minted, minted.controlToken, b.url)).catch((e: any) => e);
    t.equal(misrouted.status, 421, 'the other instance refuses before upgrading');
    t.equal(misrouted.body.reason, 'misrouted');
    t.equal(misrouted.body.details.instanceId, a.config.instanceId);
    t.equal(misrouted.headers['x-parley-instance'], a.config.instanceId);

    const media = await openMedia(mediaUrl(a, minted));
    await media.waitText((e) => e.type === 'state', 'state');
    await endWithKey(a, owner, minted.sessionId);
    await media.closed;
    const after = await openMedia(mediaUrl(a, minted)).catch((e: any) => e);
    t.equal(after.status, 404, 'an ended session has no media socket');
  },
);

t.test(
  'one media socket per session: a second connection replaces the first; a detach ends the call after the grace',
  async (t) => {
    const app = await startVoiceApp(t, { voice: { limits: { mediaGraceMs: 15_000 } } });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    // No heartbeat capability: only the media socket's presence is supervised here.
    const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
    const first = await openMedia(mediaUrl(app, minted));
    await first.waitText((e) => e.type === 'state', 'state');
    const second = await openMedia(mediaUrl(app, minted));
    await second.waitText((e) => e.type === 'state', 'state');
    t.same(await first.waitText((e) => e.notice === 'replaced', 'the replaced notice'), {
      type: 'state',
      notice: 'replaced',
    });
    t.equal((await first.closed).code, 4001, 'the first closes with 4001');
    t.equal(app.app.voice.media!.relays.size, 1);

    // Audio flows on the second one only.
    second.send(Buffer.alloc(960));
    await waitFor(
      () => (live(app, minted.sessionId).provider.stats.audioFramesSent === 1 ? true : undefined),
      'the frame',
    );
    t.equal(app.app.voice.media!.relays.get(minted.sessionId)!.stats.callerFrames, 1);

    // The replaced socket's close did not count as the caller leaving; the second one leaving does.
    app.clock.advance(20_000);
    await new Promise((r) => setTimeout(r, 50));
    t.equal(live(app, minted.sessionId).status, 'active', 'still active: the caller is connected');
    second.ws.close();
    await second.closed;
    await waitFor(() => (app.app.voice.media!.relays.size === 0 ? true : undefined), 'the relay to go');
    // Reconnecting within the grace keeps the call.
    app.clock.advance(10_000);
    const third = await openMedia(mediaUrl(app, minted));
    await third.waitText((e) => e.type === 'state', 'state');
    app.clock.advance(10_000);
    await new Promise((r) => setTimeout(r, 50));
    t.equal(live(app, minted.sessionId).status, 'active', 'back within 15 s: the call goes on');
    third.ws.terminate();
    await third.closed;
    await waitFor(() => (app.app.voice.media!.relays.size === 0 ? true : undefined), 'the relay to go');
    app.clock.advance(16_000);
    const ended = await waitFor(async () => {
      const res = await heartbeat(app, minted);
      return res.body?.status === 'ended' ? res.body : undefined;
    }, 'the disconnected end');
    t.match(ended, { status: 'ended', endReason: 'disconnected' }, 'gone for more than 15 s: disconnected');
  },
);

t.test(
  'a slow reader over a real socket: bounded backlog, assistant audio dropped and counted, the caller told',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const minted = await mintWithKey(app, owner, assistant);
    const media = await openMedia(mediaUrl(app, minted));
    await media.waitText((e) => e.type === 'state', 'state');
    const session = live(app, minted.sessionId);
    session.gate.decide('social');
    await media.waitText((e) => e.gate === 'open', 'the gate to open');

    // The caller stops reading; the provider keeps talking (delivered through the session's provider callbacks,
    // exactly as the provider link calls them): 48 MB of assistant audio, 500 s of speech.
    (media.ws as any)._socket.pause();
    const relay = app.app.voice.media!.relays.get(minted.sessionId)!;
    const rssBefore = process.memoryUsage().rss;
    const chunk = Buffer.alloc(9600, 1);
    for (let i = 0; i < 5000; i++) {
      session.handlers.onOutputAudio!(chunk);
      if (i % 500 === 0) await new Promise((r) => setImmediate(r)); // let uWS write what the kernel takes
    }
    const rssAfter = process.memoryUsage().rss;
    t.ok(
      relay.stats.maxSocketBuffered <= 9600 + 9600,
      `uWS never held more than the high-water mark plus one chunk (max ${relay.stats.maxSocketBuffered})`,
    );
    t.ok(relay.stats.maxPending <= 9600, `the ring never held more than its 200 ms (max ${relay.stats.maxPending})`);
    t.ok(
      relay.stats.assistantDroppedBytes > 40_000_000,
      `most of it was dropped (${relay.stats.assistantDroppedBytes} bytes) instead of queued`,
    );
    t.equal(
      relay.stats.assistantSentBytes + relay.stats.assistantDroppedBytes + relay.pendingBytes,
      5000 * 9600,
      'every byte is accounted for',
    );
    t.comment(
      `rss change while 48 MB went through: ${Math.round((rssAfter - rssBefore) / 1024)} KiB; sent ${relay.stats.assistantSentBytes} bytes (kernel buffers), dropped ${relay.stats.assistantDroppedBytes}`,
    );

    // The caller reads again: what waited arrives, then the notice of what was lost.
    (media.ws as any)._socket.resume();
    const notice = await media.waitText((e) => e.notice === 'audio_dropped', 'the drop notice', 20_000);
    t.match(notice, { type: 'state', notice: 'audio_dropped', droppedBytes: Number });
    t.ok(notice.droppedBytes > 0);
    await waitFor(
      () => (media.binaryBytes() >= relay.stats.assistantSentBytes ? true : undefined),
      'everything sent to arrive',
      20_000,
    );
    t.equal(media.binaryBytes(), relay.stats.assistantSentBytes, 'the caller got exactly what was sent, nothing more');
    await endWithKey(app, owner, minted.sessionId);
  },
);

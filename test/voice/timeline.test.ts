import t from 'tap';
import { createParleyClient, getVoiceTimeline, latencyByOwner } from '../../sdk/src/index.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { endWithKey, live, mintWithKey, ownerWithVoice, startVoiceApp, voiceAssistant, waitFor } from './helpers.js';
import { mediaUrl, openMedia, speechFrames } from './media-client.js';

/**
 * A call's timeline against the real provider simulator, Postgres and Redis: ordered events from the mint to the
 * settlement, a turn whose parts add up to its latency, the end agreeing with the end route and the conversation,
 * the same timeline after it was written to the database, 404 for another account, a bound on a long call's events,
 * and the turn in /metrics.
 */

const TOKEN = 'metrics-token-for-timeline-tests';
const OWNERS = ['caller', 'relay', 'provider', 'platform', 'owner'];

async function getJson(url: string, headers: Record<string, string>) {
  const res = await fetch(url, { headers });
  return { status: res.status, body: (await res.json()) as any };
}

t.test('a call explains itself: events, a turn whose parts add up, the end and its fault', async (t) => {
  const app = await startVoiceApp(t, { env: { METRICS_TOKEN: TOKEN } });
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const minted = await mintWithKey(app, owner, assistant);
  const timelineUrl = `${app.url}/api/v1/voice/sessions/${minted.sessionId}/timeline`;
  const auth = bearer(owner.secret);

  const media = await openMedia(mediaUrl(app, minted));
  await media.waitText((e) => e.type === 'state', 'the first state');
  // Two words, then silence: the simulator answers once the silence ends the utterance.
  for (const frame of speechFrames(40)) media.send(frame);
  for (let i = 0; i < 40; i++) media.send(Buffer.alloc(960));
  await waitFor(() => (media.binaryBytes() > 0 ? true : undefined), "the assistant's first audio");

  const during = await waitFor(async () => {
    const res = await getJson(timelineUrl, auth);
    return res.status === 200 && res.body.turns.length >= 1 ? res.body : undefined;
  }, 'the first turn in the live timeline');
  t.match(during, {
    sessionId: minted.sessionId,
    conversationId: minted.conversationId,
    assistantId: assistant.id,
    source: 'api',
    transport: 'websocket',
    state: 'active',
    endedAt: null,
    end: null,
  });
  const turn = during.turns[0];
  t.equal(turn.index, 1);
  t.same(
    turn.parts.map((p: any) => p.name),
    ['caller_audio_held', 'provider_first_audio', 'grounding', 'tool', 'gate', 'answer_audio_held'],
    'the six parts, in order',
  );
  const sum = turn.parts.reduce((n: number, p: any) => n + p.ms, 0);
  t.ok(Math.abs(sum - turn.latencyMs) <= 5, `parts (${sum} ms) add up to the latency (${turn.latencyMs} ms)`);
  t.ok(
    turn.parts.every((p: any) => OWNERS.includes(p.owner) && p.ms >= 0),
    'every part has an owner and no negative time',
  );
  t.ok(Math.abs(turn.firstAudioAtMs - turn.userStoppedAtMs - turn.latencyMs) <= 0.2, 'latency spans the two instants');
  t.ok(turn.latencyMs > 0, 'the caller waited for the answer');

  const end = await endWithKey(app, owner, minted.sessionId);
  t.equal(end.status, 200);
  await media.closed;

  // Read once it has been written for good (the settled call's last write), from the database.
  const stored = await waitFor(async () => {
    const rows = await app.database.sql<{ final: boolean }[]>`
      select final from voice_timelines where session_id = ${minted.sessionId}`;
    return rows[0]?.final === true ? rows[0] : undefined;
  }, 'the final timeline row');
  t.ok(stored);
  // The write's answer comes back to the writer a moment after the row is visible here: then memory lets go.
  await waitFor(
    () => (app.app.voice.timelines.live(minted.sessionId) === undefined ? true : undefined),
    'memory to let go of it once written',
  );
  t.pass('memory let go of it once written');
  const after = (await getJson(timelineUrl, auth)).body;
  t.equal(after.state, 'ended');
  t.match(after.end, {
    reason: end.body.endReason,
    endedBy: 'client',
    fault: null,
    billableSeconds: end.body.billableSeconds,
  });
  t.type(after.end.costMicros, 'number');
  t.same(after.turns, during.turns, 'the turn is the one seen live');

  const types: string[] = after.events.map((e: any) => e.type);
  const order = [
    'minted',
    'provider_connected',
    'caller_connected',
    'gate_closed',
    'turn_started',
    'gate_opened',
    'first_audio',
    'ended',
    'settled',
  ];
  let at = -1;
  for (const type of order) {
    const i = types.indexOf(type, at + 1);
    t.ok(i > at, `${type} is recorded after the ones before it`);
    at = Math.max(at, i);
  }
  t.ok(
    after.events.every((e: any, i: number) => i === 0 || e.atMs >= after.events[i - 1].atMs),
    'events never go back in time',
  );
  t.match(after.events.find((e: any) => e.type === 'ended').detail, { reason: 'client', by: 'client' });
  t.equal(after.eventsOmitted, null, 'a short call keeps every event');

  // The conversation links each of its calls to its timeline, and both agree on the end.
  const conversation = (await getJson(`${app.url}/api/v1/conversations/${minted.conversationId}`, auth)).body;
  const call = conversation.voiceCalls.find((c: any) => c.sessionId === minted.sessionId);
  t.equal(call.timelineUrl, `/api/v1/voice/sessions/${minted.sessionId}/timeline`);
  t.equal(call.endReason, after.end.reason);
  t.equal(call.billableSeconds, after.end.billableSeconds);
  t.equal(call.costMicros, after.end.costMicros);

  // Another account's call is not found; a malformed id is refused at the edge.
  const stranger = await createOwner(app.database.sql);
  const other = await getJson(timelineUrl, bearer(stranger.secret));
  t.equal(other.status, 404);
  t.equal(other.body.code, 'VOICE_SESSION_NOT_FOUND');
  const bad = await getJson(`${app.url}/api/v1/voice/sessions/nope/timeline`, auth);
  t.equal(bad.status, 400);

  // The SDK reads the same timeline; another account's key gets a 404 there too.
  const sdk = createParleyClient({ baseUrl: app.url, apiKey: owner.secret });
  const viaSdk = await getVoiceTimeline(sdk, minted.sessionId);
  t.same(viaSdk.turns, after.turns);
  const byOwner = latencyByOwner(viaSdk.turns[0]!);
  t.ok(Math.abs(Object.values(byOwner).reduce((a, b) => a + b, 0) - turn.latencyMs) <= 5, 'by owner, it adds up');
  await t.rejects(
    getVoiceTimeline(createParleyClient({ baseUrl: app.url, apiKey: stranger.secret }), minted.sessionId),
    { status: 404, code: 'VOICE_SESSION_NOT_FOUND' },
  );

  // The assistant's turn latency by day, and the turn in /metrics.
  const latency = await getJson(`${app.url}/api/v1/assistants/${assistant.id}/voice/latency?days=7`, auth);
  t.equal(latency.status, 200);
  t.equal(latency.body.days.length, 1);
  t.match(latency.body.days[0], { turns: 1, latencyP50Ms: turn.latencyMs });
  const scraped = await (await fetch(`${app.url}/metrics`, { headers: bearer(TOKEN) })).text();
  t.match(scraped, /parley_voice_turn_latency_seconds_count\{[^}]*\} [1-9]/);
  t.match(scraped, /parley_voice_time_to_first_audio_seconds_count\{[^}]*\} [1-9]/);
});

t.test('the end names whose fault it was: idle is the caller’s', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { idleTimeoutSeconds: 30 } });
  const minted = await mintWithKey(app, owner, assistant, { capabilities: ['playback_gate'] });
  app.clock.advance(31_000);
  const end = await waitFor(async () => {
    const res = await endWithKey(app, owner, minted.sessionId);
    return res.body.endReason === 'idle' ? res.body : undefined;
  }, 'idle end');
  const timeline = await waitFor(async () => {
    const res = await getJson(`${app.url}/api/v1/voice/sessions/${minted.sessionId}/timeline`, bearer(owner.secret));
    return res.body.end !== null ? res.body : undefined;
  }, 'the ended timeline');
  t.match(timeline.end, { reason: 'idle', endedBy: 'service', fault: 'caller', billableSeconds: end.billableSeconds });
  t.notOk(
    timeline.events.some((e: any) => e.type === 'caller_connected'),
    'nobody joined: no caller_connected',
  );
});

t.test('a long, eventful call keeps its first and last events and counts the middle', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const minted = await mintWithKey(app, owner, assistant);
  const session = live(app, minted.sessionId);
  // The caller hangs up its socket (the call goes on for the grace period): that is an event too.
  const media = await openMedia(mediaUrl(app, minted));
  await media.waitText((e) => e.type === 'state', 'the first state');
  media.ws.close();
  await waitFor(() => session.timeline.has('caller_disconnected'), 'caller_disconnected');
  // What a phone transport would record for its keypad: the one recording function of the call.
  for (let i = 0; i < 2000; i++) session.timeline.record('dtmf', { digit: String(i % 10) });
  await endWithKey(app, owner, minted.sessionId);
  const timeline = (
    await getJson(`${app.url}/api/v1/voice/sessions/${minted.sessionId}/timeline`, bearer(owner.secret))
  ).body;
  t.equal(timeline.events.length, 250, 'at most 100 first and 150 last events');
  t.equal(timeline.events[0].type, 'minted', 'the first events are kept');
  t.equal(timeline.events.at(-1).type, 'settled', 'the last events are kept');
  const kept = timeline.events.filter((e: any) => e.type === 'dtmf').length;
  const counted = Object.values(timeline.eventsOmitted.byType as Record<string, number>).reduce((a, b) => a + b, 0);
  t.equal(timeline.eventsOmitted.count, counted, 'the count is the sum by type');
  t.equal(timeline.eventsOmitted.byType.dtmf, 2000 - kept, 'the middle is counted by type');
  t.ok(timeline.eventsOmitted.fromMs <= timeline.eventsOmitted.toMs);
});

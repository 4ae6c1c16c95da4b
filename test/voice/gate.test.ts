import t from 'tap';
import {
  endWithKey,
  live,
  mintWithKey,
  ndjsonReader,
  openGate,
  ownerWithVoice,
  post,
  speak,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from './helpers.js';

t.test(
  'gate stream: current decision first, speech closes it, a reply opens it, keepalive, end line, then the stream closes',
  async (t) => {
    const app = await startVoiceApp(t);
    const owner = await ownerWithVoice(app);
    const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner), { capabilities: ['playback_gate'] });
    const res = await openGate(app, minted);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /application\/x-ndjson/);
    const lines = ndjsonReader(res);
    t.same(
      await lines.next(),
      { type: 'gate', seq: 0, state: 'closed', reason: 'start', inputEndMs: null },
      'closed at start',
    );

    const session = live(app, minted.sessionId);
    speak(session, 2);
    const speaking = await lines.next();
    t.match(
      speaking,
      { type: 'gate', seq: 1, state: 'closed', reason: 'user_speaking' },
      'visitor speech closes the gate',
    );
    t.type(speaking.inputEndMs, 'number');
    let line = await lines.next();
    while (line.reason === 'user_speaking') {
      t.ok(line.inputEndMs >= speaking.inputEndMs, 'inputEndMs moves forward while the visitor speaks');
      line = await lines.next();
    }
    t.match(
      line,
      { type: 'gate', state: 'open', reason: 'social' },
      "the model's reply (no delegation) opens the gate",
    );

    app.clock.advance(10_000);
    t.same(await lines.next(), { type: 'keepalive' }, 'a keepalive after 10 s without a decision');

    const end = await endWithKey(app, owner, minted.sessionId);
    t.equal(end.body.endReason, null);
    t.same(await lines.next(), { type: 'end', endReason: null }, 'the end line');
    t.equal(await lines.next(), null, 'then the stream closes');

    // The transcript became conversation messages, next to chat conversations.
    const messages = await app.database.sql`
    select role, content from messages where conversation_id = ${minted.conversationId} order by created_at, id`;
    t.ok(messages.length >= 2, 'user and assistant turns stored');
    t.equal(messages[0]!.role, 'user');
    t.ok(messages.some((m) => m.role === 'assistant'));
    const [conversation] = await app.database
      .sql`select source, message_count from conversations where id = ${minted.conversationId}`;
    t.match(conversation, { source: 'api', messageCount: messages.length });
  },
);

t.test('at most 4 gate streams per session; a reader that leaves frees its slot', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner));
  const session = live(app, minted.sessionId);
  const aborts: AbortController[] = [];
  for (let i = 0; i < 4; i++) {
    const controller = new AbortController();
    aborts.push(controller);
    const res = await openGate(app, minted, controller.signal);
    t.equal(res.status, 200, `stream ${i + 1}`);
    t.match(await ndjsonReader(res).next(), { type: 'gate', seq: 0 });
  }
  const fifth = await openGate(app, minted);
  t.equal(fifth.status, 429, 'the fifth stream is refused');
  t.equal(((await fifth.json()) as { code: string }).code, 'VOICE_GATE_STREAM_LIMIT');

  aborts[0]!.abort();
  await waitFor(() => session.gate.openStreams === 3, 'the disconnected reader is cleaned up');
  const again = await openGate(app, minted);
  t.equal(again.status, 200, 'a new stream fits again');
  const lines = ndjsonReader(again);
  t.match(await lines.next(), { type: 'gate' });
  for (const c of aborts.slice(1)) c.abort();
  await endWithKey(app, owner, minted.sessionId);
  t.same(await lines.next(), { type: 'end', endReason: null });
  await waitFor(() => session.gate.openStreams === 0, 'all streams closed');
});

t.test('gate of a session that is over: the end line at once; wrong token 404', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const minted = await mintWithKey(app, owner, await voiceAssistant(app, owner));
  app.clock.advance(46_000);
  await waitFor(() => !app.app.voice.sessions.has(minted.sessionId), 'heartbeat_lost end');
  const lines = ndjsonReader(await openGate(app, minted));
  t.match(await lines.next(), { type: 'gate', state: 'closed' });
  t.same(await lines.next(), { type: 'end', endReason: 'heartbeat_lost' });
  t.equal(await lines.next(), null);
  const wrong = await post(app.url, `/api/v1/voice/sessions/${minted.sessionId}/gate`, { token: 'v1.1.nope' });
  t.equal(wrong.status, 404);
});

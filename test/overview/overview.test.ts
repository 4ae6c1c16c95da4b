import t from 'tap';
import { bearer, createOwner } from '../helpers/identity.js';
import { endWithKey, mintWithKey, startVoiceApp, voiceAssistant, waitFor } from '../voice/helpers.js';
import { mediaUrl, openMedia, speechFrames } from '../voice/media-client.js';

/**
 * The owner's overview and call log over a real call (simulator, WebSocket), real chats, and calls written as the
 * phone and widget paths write them: today's figures across assistants, the call log's filters and pages, and refusals.
 */
t.test("an owner sees the day's calls and chats on one page, and every call in one log", async (t) => {
  const app = await startVoiceApp(t);
  const { sql } = app.database;
  const owner = await createOwner(sql);
  const other = await createOwner(sql);
  const front = await voiceAssistant(app, owner);
  const back = await voiceAssistant(app, owner);
  await sql`update assistants set name = 'Back office' where id = ${back.id}`;
  const auth = bearer(owner.secret);
  const get = async (path: string, headers = auth) => {
    const res = await fetch(`${app.url}${path}`, { headers });
    return { status: res.status, body: (await res.json()) as any };
  };

  // A real call: the caller speaks, the simulator answers, the owner hangs up.
  const minted = await mintWithKey(app, owner, front);
  const media = await openMedia(mediaUrl(app, minted));
  await media.waitText((e) => e.type === 'state', 'the first state');
  for (const frame of speechFrames(40)) media.send(frame);
  for (let i = 0; i < 40; i++) media.send(Buffer.alloc(960));
  await waitFor(() => (media.binaryBytes() > 0 ? true : undefined), "the assistant's first audio");
  await waitFor(async () => {
    const tl = await get(`/api/v1/voice/sessions/${minted.sessionId}/timeline`);
    return tl.body.turns?.length >= 1 ? true : undefined;
  }, 'the first measured turn');
  t.equal((await endWithKey(app, owner, minted.sessionId)).status, 200);
  await media.closed;
  await waitFor(async () => {
    const rows = await sql<
      { final: boolean }[]
    >`select final from voice_timelines where session_id = ${minted.sessionId}`;
    return rows[0]?.final === true ? true : undefined;
  }, 'the final timeline');

  // Calls as the phone and widget paths store them: a phone call that went idle, a widget call hung up, and one of
  // yesterday's; another account's call that must never show.
  const insertCall = async (o: {
    id: string;
    accountId: string;
    assistantId: string;
    source: string;
    endReason: string | null;
    caller?: string;
    transport: string;
    daysAgo?: number;
  }) => {
    const at = new Date(Date.now() - (o.daysAgo ?? 0) * 86_400_000 - 60_000);
    await sql`
      insert into voice_sessions (id, account_id, assistant_id, source, state, end_reason, ended_by, capabilities,
        provider, owner_instance, max_duration_seconds, idle_timeout_seconds, billable_seconds, created_at, started_at,
        ended_at, caller_number)
      values (${o.id}, ${o.accountId}, ${o.assistantId}, ${o.source}, 'ended', ${o.endReason},
        ${o.endReason === null ? 'client' : 'service'}, '{}', 'simulator', 'gone', 900, 600, 42, ${at}, ${at},
        ${new Date(at.getTime() + 42_000)}, ${o.caller ?? null})`;
    await sql`
      insert into voice_timelines (session_id, account_id, assistant_id, transport, minted_at, events, turns, final)
      values (${o.id}, ${o.accountId}, ${o.assistantId}, ${o.transport}, ${at}, '[]',
        ${sql.json([
          { index: 1, latencyMs: 900 },
          { index: 2, latencyMs: 1500 },
        ])}, true)`;
  };
  await sql`insert into phone_numbers (id, account_id, assistant_id, phone_number, provider, carrier_account, auth_token_sealed)
            values ('pn_overview1', ${owner.accountId}, ${back.id}, '+15550007777', 'twilio', 'AC1', 'sealed')`;
  await insertCall({
    id: 'vs_phone_idle',
    accountId: owner.accountId,
    assistantId: back.id,
    source: 'phone',
    endReason: 'idle',
    caller: '+14155550123',
    transport: 'phone',
  });
  await insertCall({
    id: 'vs_widget_hangup',
    accountId: owner.accountId,
    assistantId: back.id,
    source: 'widget',
    endReason: null,
    transport: 'webrtc',
  });
  await insertCall({
    id: 'vs_yesterday',
    accountId: owner.accountId,
    assistantId: front.id,
    source: 'api',
    endReason: 'max_duration',
    transport: 'websocket',
    daysAgo: 1,
  });
  const foreign = await voiceAssistant(app, other);
  await insertCall({
    id: 'vs_foreign',
    accountId: other.accountId,
    assistantId: foreign.id,
    source: 'api',
    endReason: null,
    transport: 'websocket',
  });
  // A chat on the back-office assistant: one question, answered or not (no documents: not answered).
  const chat = await fetch(`${app.url}/api/v1/chat`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ assistantId: back.publicId, message: 'Do you open on Sundays?' }),
  });
  t.equal(chat.status, 200);

  const today = new Date().toISOString().slice(0, 10);
  const overview = await get('/api/v1/overview');
  t.equal(overview.status, 200);
  const o = overview.body;
  t.equal(o.date, today, "today's UTC day by default");
  t.equal(o.calls, 3, "today's three calls of this account (yesterday's and the other account's left out)");
  t.equal(o.chats, 1, 'the chat without a call');
  t.ok(o.questions >= 2, 'the spoken question and the typed one are counted');
  t.ok(o.answeredRate === null || (o.answeredRate >= 0 && o.answeredRate <= 1), 'a rate between 0 and 1');
  t.ok(o.turnLatency.turns >= 5, 'the real call’s turn and the stored ones');
  t.ok(o.turnLatency.p50Ms > 0 && o.turnLatency.p95Ms >= o.turnLatency.p50Ms, 'p95 at least p50');
  t.same(
    Object.fromEntries(o.endReasons.map((r: any) => [r.reason, r.count])),
    { hangup: 2, idle: 1 },
    'the owner hung up the real call, the widget caller hung up, the phone call went idle',
  );
  t.type(o.spend.costMicros, 'number');
  t.same(
    o.assistants.map((a: any) => [a.name, a.calls, a.chats]),
    [
      ['Back office', 2, 1],
      ['Voice helper', 1, 0],
    ],
    'per assistant, the busiest first',
  );
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  const before = (await get(`/api/v1/overview?date=${yesterday}`)).body;
  t.equal(before.calls, 1, "yesterday's call on yesterday's page");
  t.same(before.endReasons, [{ reason: 'max_duration', count: 1 }]);

  // The call log: every call of the account, newest first, with cost and latency; filters; pages.
  const all = await get('/api/v1/call-log');
  t.equal(all.status, 200);
  t.same(
    all.body.calls.map((c: any) => c.sessionId).sort(),
    [minted.sessionId, 'vs_phone_idle', 'vs_widget_hangup', 'vs_yesterday'].sort(),
    "this account's calls only",
  );
  const real = all.body.calls.find((c: any) => c.sessionId === minted.sessionId);
  const timeline = (await get(`/api/v1/voice/sessions/${minted.sessionId}/timeline`)).body;
  t.match(real, {
    assistantPublicId: front.publicId,
    assistantName: 'Voice helper',
    source: 'api',
    transport: 'websocket',
    state: 'ended',
    endReason: 'hangup',
    costMicros: timeline.end.costMicros,
    turns: timeline.turns.length,
    timelineUrl: `/api/v1/voice/sessions/${minted.sessionId}/timeline`,
  });
  t.ok(real.latencyP50Ms > 0, 'its median turn latency');
  const phone = all.body.calls.find((c: any) => c.sessionId === 'vs_phone_idle');
  t.match(phone, { transport: 'phone', callerNumber: '+1 415 ••• 0123', durationSeconds: 42, latencyP50Ms: 1200 });

  const ids = async (query: string) => {
    const res = await get(`/api/v1/call-log?${query}`);
    t.equal(res.status, 200, query);
    return res.body.calls.map((c: any) => c.sessionId).sort();
  };
  t.same(await ids(`assistantId=${back.publicId}`), ['vs_phone_idle', 'vs_widget_hangup'], 'by assistant (asst_ id)');
  t.same(await ids(`assistantId=${back.id}`), ['vs_phone_idle', 'vs_widget_hangup'], 'by assistant (internal id)');
  t.same(await ids('transport=webrtc'), ['vs_widget_hangup'], 'by transport');
  t.same(await ids('source=phone'), ['vs_phone_idle'], 'by source');
  t.same(await ids('phoneNumber=%2B1%20415%20555%200123'), ['vs_phone_idle'], "by the caller's number");
  t.same(await ids('phoneNumber=5550007777'), ['vs_phone_idle'], 'by the number the call came in on');
  t.same(await ids('endReason=idle'), ['vs_phone_idle'], 'by end reason');
  t.same(await ids('endReason=hangup').then((l) => l.length), 2, 'hang-ups');
  t.same(await ids(`from=${yesterday}&to=${yesterday}`), ['vs_yesterday'], 'by date (a day counts whole)');

  const first = await get('/api/v1/call-log?limit=3');
  t.equal(first.body.calls.length, 3);
  t.type(first.body.nextCursor, 'string');
  const second = await get(`/api/v1/call-log?limit=3&cursor=${first.body.nextCursor}`);
  t.same(
    second.body.calls.map((c: any) => c.sessionId),
    ['vs_yesterday'],
    'the oldest on the next page',
  );
  t.equal(second.body.nextCursor, null);

  // Refusals: clear 4xx naming the field; another account's assistant is 404; a key without the scope is 403.
  const bad = await get('/api/v1/overview?date=2026-13-45');
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body.details), /date/);
  t.equal((await get('/api/v1/call-log?transport=pigeon')).status, 400);
  t.equal((await get('/api/v1/call-log?phoneNumber=abc')).status, 400);
  t.equal((await get('/api/v1/call-log?cursor=nope')).status, 400);
  t.equal((await get(`/api/v1/call-log?assistantId=${foreign.publicId}`)).status, 404);
  const narrow = await createOwner(sql, { scopes: ['chat'] });
  t.equal((await get('/api/v1/overview', bearer(narrow.secret))).status, 403);
  t.equal((await get('/api/v1/call-log', bearer(narrow.secret))).status, 403);
  const empty = (await get('/api/v1/overview', bearer(other.secret))).body;
  t.equal(empty.calls, 1, 'the other account sees only its own call');
});

/**
 * Conversations an owner can use: the list shows channel, start, duration, cost, first message and a readable visitor
 * label; search and filters; export one (JSON) and a list (CSV); delete one, or everything about a visitor (messages,
 * calls, recordings on disk, feedback), audited. Real Postgres, Redis and a voice call through the media socket.
 */
import { existsSync } from 'node:fs';
import t from 'tap';
import { waitForDocument } from '../documents/fixtures.js';
import { bearer, createOwner } from '../helpers/identity.js';
import {
  endWithKey,
  live,
  mintAsWidget,
  ORIGIN,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
  type Minted,
} from '../voice/helpers.js';
import { mediaUrl, openMedia, speechFrames } from '../voice/media-client.js';

type Summary = {
  id: string;
  visitorId: string | null;
  visitorLabel: string;
  channel: 'chat' | 'voice';
  callCount: number;
  messageCount: number;
  firstMessage: string | null;
  outcome: string | null;
  startedAt: string;
  durationSeconds: number;
  costMicros: number;
};

t.test('conversations: list, search, export and delete, as an owner uses them', async (t) => {
  const app = await startVoiceApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' } });
  const owner = await ownerWithVoice(app);
  const reader = await createOwner(app.database.sql, { scopes: ['conversations:read'] });
  const stranger = await createOwner(app.database.sql);
  const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: true } });
  const api = async (path: string, init: RequestInit = {}, secret = owner.secret) =>
    fetch(`${app.url}${path}`, { ...init, headers: { ...bearer(secret), 'content-type': 'application/json' } });
  const json = async <T>(path: string, init?: RequestInit, secret?: string) => {
    const res = await api(path, init, secret);
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const list = async (query = '') =>
    (await json<{ conversations: Summary[] }>(`/api/v1/conversations${query}`)).conversations;

  // Knowledge to answer from.
  const doc = (
    await json<{ document: { id: string } }>('/api/v1/documents', {
      method: 'POST',
      body: JSON.stringify({
        assistantId: assistant.publicId,
        type: 'text',
        name: 'Refunds',
        text: '# Refunds\n\nRefunds are paid within thirty days of delivery, back to the original card.',
      }),
    })
  ).document;
  await waitForDocument(
    async () =>
      (await json<{ document: { status: string; error: string | null } }>(`/api/v1/documents/${doc.id}`)).document,
  );

  // A: a widget visitor asks about refunds (answered) and rates it.
  const visitor = 'v_7d1f1c0e-4c55-4c1b-9d2e-0a1b2c3d4e5f';
  const a = await post(
    app.url,
    '/api/v1/chat',
    { assistantId: assistant.publicId, message: 'How are refunds paid?', visitorId: visitor },
    { origin: ORIGIN },
  );
  t.equal(a.status, 200);
  const aId = a.body.conversationId as string;
  t.equal(
    (
      await post(
        app.url,
        '/api/v1/feedback',
        { messageId: a.body.messageId, rating: 'positive', visitorId: visitor },
        { origin: ORIGIN },
      )
    ).status,
    200,
  );
  // B: an API caller asks what the documents do not answer; its text would be a formula in a spreadsheet.
  const b = await json<{ conversationId: string; outcome: string }>('/api/v1/chat', {
    method: 'POST',
    body: JSON.stringify({ assistantId: assistant.publicId, message: '=HYPERLINK("x") zebra migration?' }),
  });
  const bId = b.conversationId;
  // C: the same visitor calls (recorded, consented) and speaks.
  const minted = (await mintAsWidget(app, assistant, { visitorId: visitor })).body as Minted;
  const media = await openMedia(mediaUrl(app, minted));
  for (const frame of speechFrames(30)) media.send(frame);
  await waitFor(
    () => (live(app, minted.sessionId).provider.stats.audioFramesSent >= 30 ? true : undefined),
    'the audio to reach the provider',
  );
  t.ok(app.app.voice.recordings!.isWriting(minted.sessionId), 'the call is being recorded');

  await t.test('deleting a conversation whose call still runs is refused (409)', async (t) => {
    const res = await api(`/api/v1/conversations/${minted.conversationId}`, { method: 'DELETE' });
    t.equal(res.status, 409);
    t.equal(((await res.json()) as { code: string }).code, 'CONVERSATION_CALL_ACTIVE');
  });

  await endWithKey(app, owner, minted.sessionId);
  await media.closed;
  await app.app.voice.recordings!.settled();
  const wav = app.app.voice.recordings!.pathOf(minted.sessionId);
  t.ok(existsSync(wav), 'the recording is on disk');
  const cId = minted.conversationId;

  t.test('the list: channel, start, duration, cost, first message, a readable visitor label', async (t) => {
    const all = await list();
    const byId = new Map(all.map((c) => [c.id, c]));
    const [ca, cb, cc] = [byId.get(aId)!, byId.get(bId)!, byId.get(cId)!];
    t.match(ca, { channel: 'chat', callCount: 0, firstMessage: 'How are refunds paid?', outcome: 'answered' });
    t.match(cb, { channel: 'chat', visitorLabel: 'API caller', outcome: 'no_answer' });
    t.match(cc, { channel: 'voice', callCount: 1, outcome: 'no_answer' });
    t.match(ca.visitorLabel, /^Visitor [A-Z2-9]{4}$/, 'not a raw id');
    t.equal(cc.visitorLabel, ca.visitorLabel, 'one visitor, one label');
    for (const c of [ca, cb, cc]) {
      t.ok(Number.isInteger(c.durationSeconds) && c.durationSeconds >= 0, 'a duration');
      t.ok(Date.parse(c.startedAt) > 0, 'a start');
    }
    // Costs come from what was recorded: each answer's cost, and each call's settled usage events.
    const [callCost] = await app.database.sql<Array<{ cost: number }>>`
      select coalesce(sum(e.cost_micros), 0)::int as cost from usage_reservations r
      join usage_events e on e.reservation_id = r.id and e.outcome = 'settled'
      where r.voice_session_id = ${minted.sessionId}`;
    t.ok(callCost!.cost > 0, 'the call was metered');
    const detail = await json<{
      conversation: Summary;
      voiceCalls: Array<{ costMicros: number }>;
      messages: Array<{ costMicros: number }>;
    }>(`/api/v1/conversations/${cId}`);
    t.equal(detail.voiceCalls[0]!.costMicros, callCost!.cost, "the call's cost, from the ledger");
    const messagesCost = detail.messages.reduce((n, m) => n + m.costMicros, 0);
    t.equal(detail.conversation.costMicros, callCost!.cost + messagesCost, 'the conversation adds them up');
    const chatDetail = await json<{ conversation: Summary; messages: Array<{ role: string; costMicros: number }> }>(
      `/api/v1/conversations/${aId}`,
    );
    t.equal(
      chatDetail.conversation.costMicros,
      chatDetail.messages.reduce((n, m) => n + m.costMicros, 0),
      'a chat costs what its answers cost',
    );
  });

  t.test('search by text; filter by channel, outcome, date, visitor', async (t) => {
    const ids = (cs: Summary[]) => cs.map((c) => c.id).sort();
    t.same(ids(await list('?q=REFUNDS')), [aId], 'words in a message, any case');
    t.same(ids(await list('?q=50%25')), [], '% is literal');
    t.same(ids(await list('?channel=voice')), [cId]);
    t.same(ids(await list('?channel=chat')), [aId, bId].sort());
    // C's caller spoke and the call ended before an answer: listed not answered, and so filtered.
    t.same(ids(await list('?outcome=no_answer')), [bId, cId].sort());
    t.same(ids(await list('?outcome=answered')), [aId]);
    t.same(ids(await list(`?visitorId=${visitor}`)), [aId, cId].sort());
    const today = new Date().toISOString().slice(0, 10);
    t.equal((await list(`?from=${today}&to=${today}`)).length, 3, 'a date is the whole day');
    t.same(await list('?to=2001-01-01'), []);
    const bad = await api('/api/v1/conversations?from=yesterday');
    t.equal(bad.status, 400);
    t.match(await bad.json(), { code: 'VALIDATION_FAILED', details: { issues: [{ path: 'query.from' }] } });
  });

  t.test('export one conversation as JSON: transcript, calls, sources (each once)', async (t) => {
    const res = await api(`/api/v1/conversations/${aId}/export`);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-disposition'), new RegExp(`attachment; filename="${aId}.json"`));
    const body = (await res.json()) as any;
    t.equal(body.conversation.id, aId);
    t.same(
      body.messages.map((m: any) => m.role),
      ['user', 'assistant'],
    );
    t.same(body.sources, [{ documentId: doc.id, name: 'Refunds', citations: 1 }]);
    t.ok(Array.isArray(body.voiceCalls));
    const call = (await (await api(`/api/v1/conversations/${cId}/export`)).json()) as any;
    t.equal(call.voiceCalls.length, 1);
    t.equal(call.recordings.length, 1);
  });

  t.test('export the list as CSV, with the filters; formulas are defused', async (t) => {
    const res = await api('/api/v1/conversations/export?channel=chat');
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/csv/);
    t.match(res.headers.get('content-disposition'), /attachment; filename="conversations-\d{4}-\d{2}-\d{2}\.csv"/);
    const lines = (await res.text()).trimEnd().split('\r\n');
    t.equal(
      lines[0],
      'id,startedAt,channel,visitor,visitorId,assistantId,messages,calls,durationSeconds,costMicros,outcome,firstMessage,summary,success,successVerdict,sentiment',
    );
    t.equal(lines.length, 3, 'two chat conversations');
    const bLine = lines.find((l) => l.startsWith(bId))!;
    t.match(bLine, /,"'=HYPERLINK\(""x""\) zebra migration\?",/, 'quoted, and prefixed so it is not run');
  });

  t.test('delete one conversation: scope, ownership, audit', async (t) => {
    t.equal((await api(`/api/v1/conversations/${bId}`, { method: 'DELETE' }, reader.secret)).status, 403);
    t.equal((await api(`/api/v1/conversations/${bId}`, { method: 'DELETE' }, stranger.secret)).status, 404);
    const res = await json<{ deleted: Record<string, number> }>(`/api/v1/conversations/${bId}`, { method: 'DELETE' });
    t.match(res.deleted, { conversations: 1, messages: 2, recordings: 0 });
    t.equal((await api(`/api/v1/conversations/${bId}`)).status, 404);
    const [audit] = await app.database.sql<Array<{ actorUserId: string }>>`
      select actor_user_id from audit_log where action = 'conversation.deleted' and target_id = ${bId}`;
    t.equal(audit?.actorUserId, owner.userId, 'audited, with who');
  });

  t.test(
    'delete everything about one visitor: conversations, feedback, calls unlinked, recordings off disk',
    async (t) => {
      const res = await json<{ deleted: Record<string, number> }>(`/api/v1/visitors/${encodeURIComponent(visitor)}`, {
        method: 'DELETE',
      });
      t.match(res.deleted, { conversations: 2, feedback: 1, recordings: 1 });
      t.ok(res.deleted['calls']! >= 1);
      t.notOk(existsSync(wav), 'the recording is gone from disk');
      t.same(await list(`?visitorId=${visitor}`), []);
      const [left] = await app.database.sql<Array<{ n: number }>>`
      select count(*)::int as n from voice_sessions where visitor_id = ${visitor}`;
      t.equal(left!.n, 0, 'no call keeps the visitor id');
      const [kept] = await app.database.sql<Array<{ n: number }>>`
      select count(*)::int as n from voice_sessions where id = ${minted.sessionId}`;
      t.equal(kept!.n, 1, 'the call stays as the billing record');
      const [audit] = await app.database.sql<Array<{ targetId: string }>>`
      select target_id from audit_log where action = 'visitor.data_deleted'`;
      t.match(audit?.targetId, /^Visitor /, 'audited, without repeating the id that was to be forgotten');
      const again = await json<{ deleted: Record<string, number> }>(`/api/v1/visitors/${visitor}`, {
        method: 'DELETE',
      });
      t.match(again.deleted, { conversations: 0 }, 'nothing left');
    },
  );
});

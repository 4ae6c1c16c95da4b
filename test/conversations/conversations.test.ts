import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';
import {
  live,
  mintAsWidget,
  mintWithKey,
  ORIGIN,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  type Minted,
} from '../voice/helpers.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';

t.test('conversations: list and get, never across accounts; 401/403/404/400', async (t) => {
  const { url, deps } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const other = await createOwner(deps.sql);
  const noScope = await createOwner(deps.sql, { scopes: ['chat'] });
  const api = (path: string, secret: string | null = owner.secret, body?: unknown) =>
    fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { ...(secret ? bearer(secret) : {}), 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const mk = async (name: string) =>
    (
      (await (await api('/api/v1/assistants', owner.secret, { name })).json()) as {
        assistant: { id: string; publicId: string };
      }
    ).assistant;
  const a = await mk('A');
  const b = await mk('B');
  const ids: string[] = [];
  for (const [assistant, message] of [
    [a, 'one'],
    [a, 'two'],
    [b, 'three'],
  ] as const) {
    const res = await api('/api/v1/chat', owner.secret, { assistantId: assistant.id, message });
    ids.push(((await res.json()) as { conversationId: string }).conversationId);
  }

  const all = (await (await api('/api/v1/conversations')).json()) as {
    conversations: Array<{ id: string; assistantId: string; messageCount: number }>;
    nextCursor: string | null;
  };
  t.same(
    all.conversations.map((c) => c.id),
    [...ids].reverse(),
    'newest first',
  );
  t.equal(all.nextCursor, null);
  const ofA = (await (await api(`/api/v1/conversations?assistantId=${a.publicId}`)).json()) as typeof all;
  t.same(
    ofA.conversations.map((c) => c.id),
    [ids[1], ids[0]],
    'filtered by assistant (public id)',
  );
  t.ok(ofA.conversations.every((c) => c.assistantId === a.id && c.messageCount === 2));
  const paged = (await (await api('/api/v1/conversations?limit=1')).json()) as typeof all;
  t.equal(paged.conversations.length, 1);
  const page2 = (await (await api(`/api/v1/conversations?limit=1&cursor=${paged.nextCursor}`)).json()) as typeof all;
  t.equal(page2.conversations[0]?.id, ids[1]);

  const one = await api(`/api/v1/conversations/${ids[0]}`);
  t.equal(one.status, 200);
  const detail = (await one.json()) as { messages: Array<{ role: string; content: string; outcome: string | null }> };
  t.same(
    detail.messages.map((m) => [m.role, m.role === 'user' ? m.content : m.outcome]),
    [
      ['user', 'one'],
      ['assistant', 'no_answer'],
    ],
  );

  const theirs = (await (await api('/api/v1/conversations', other.secret)).json()) as typeof all;
  t.same(theirs.conversations, [], 'another account lists none');
  t.equal((await api(`/api/v1/conversations/${ids[0]}`, other.secret)).status, 404, 'another account cannot read it');
  t.equal(
    (await api(`/api/v1/conversations?assistantId=${a.id}`, other.secret)).status,
    404,
    'nor filter by its assistant',
  );
  t.equal((await api(`/api/v1/conversations/${ids[0]}`, null)).status, 401);
  t.equal((await api('/api/v1/conversations', 'sk_live_wrong')).status, 401);
  t.equal((await api(`/api/v1/conversations/${ids[0]}`, noScope.secret)).status, 403, 'needs conversations:read');
  t.equal((await api('/api/v1/conversations/conv_missing')).status, 404);
  t.equal((await api('/api/v1/conversations?limit=0')).status, 400);
});

t.test("a conversation shows each answer's feedback and its voice calls with end reason and duration", async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const visitorId = 'visitor-conv-1';
  const chat = await post(
    app.url,
    '/api/v1/chat',
    { assistantId: assistant.publicId, message: 'Hello there', visitorId },
    { origin: ORIGIN },
  );
  t.equal(chat.status, 200);
  const { conversationId, messageId } = chat.body as { conversationId: string; messageId: string };
  const rated = await post(
    app.url,
    '/api/v1/feedback',
    { messageId, rating: 'negative', visitorId },
    { origin: ORIGIN },
  );
  t.equal(rated.status, 200, 'the visitor rated the answer');

  // Two calls in the same conversation: the visitor hangs up the first, the service ends the second (idle).
  const first = await mintAsWidget(app, assistant, { conversationId, visitorId });
  t.equal(first.status, 200);
  const media = await openMedia(mediaUrl(app, first.body as Minted));
  await new Promise((r) => setTimeout(r, 1100));
  const hungUp = await post(
    app.url,
    `/api/v1/voice/sessions/${first.body.sessionId}/end`,
    { visitorId },
    { origin: ORIGIN },
  );
  t.equal(hungUp.status, 200);
  await media.closed; // the service closes the socket when the call ends
  const second = await mintWithKey(app, owner, assistant, { conversationId });
  await live(app, second.sessionId).end('idle');

  const res = await fetch(`${app.url}/api/v1/conversations/${conversationId}`, { headers: bearer(owner.secret) });
  t.equal(res.status, 200);
  const body = (await res.json()) as any;
  t.same(
    body.messages.map((m: any) => [m.role, m.feedback]),
    [
      ['user', null],
      ['assistant', 'negative'],
    ],
    'the answer carries its rating',
  );
  t.equal(body.voiceCalls.length, 2);
  const [a, b] = body.voiceCalls;
  t.match(a, {
    sessionId: first.body.sessionId,
    source: 'widget',
    state: 'ended',
    endReason: null,
    billableSeconds: hungUp.body.billableSeconds,
  });
  t.ok(a.durationSeconds >= 1, `the hung-up call lasted about a second (${a.durationSeconds} s)`);
  t.ok(Date.parse(a.endedAt) >= Date.parse(a.startedAt));
  t.match(
    b,
    { sessionId: second.sessionId, source: 'api', state: 'ended', endReason: 'idle' },
    'owners see the real end reason',
  );
  t.type(b.durationSeconds, 'number');
});

import t from 'tap';
import { bearer } from '../helpers/identity.js';
import { call, createWorld, WIDGET_ORIGIN } from '../fuzz/world.js';

/**
 * With an allowed Origin, a keyless chat or voice mint given an API conversation's id continued it,
 * and keyless feedback rated an API message. Keyless callers reach only their own visitor's conversations.
 */
const { app, a } = await createWorld(t);
const widget = { origin: WIDGET_ORIGIN };
const OTHER = 'visitor-someone-else-9';
const messages = async (conversationId: string) =>
  (await app.database.sql`select count(*)::int as n from messages where conversation_id = ${conversationId}`)[0]!
    .n as number;

t.test("keyless chat cannot continue an API conversation or another visitor's", async (t) => {
  const before = await messages(a.apiConversationId);
  for (const visitorId of [undefined, a.visitorId, OTHER]) {
    const res = await call(
      app,
      'POST',
      '/api/v1/chat',
      {
        assistantId: a.assistant.publicId,
        message: 'continue please',
        conversationId: a.apiConversationId,
        ...(visitorId ? { visitorId } : {}),
      },
      widget,
    );
    t.equal(res.status, 404, `API conversation, visitor ${visitorId ?? 'none'}: 404`);
  }
  t.equal(await messages(a.apiConversationId), before, 'nothing was added to the API conversation');
  for (const visitorId of [undefined, OTHER]) {
    const res = await call(
      app,
      'POST',
      '/api/v1/chat',
      {
        assistantId: a.assistant.publicId,
        message: 'hi',
        conversationId: a.widgetConversationId,
        ...(visitorId ? { visitorId } : {}),
      },
      widget,
    );
    t.equal(res.status, 404, `another visitor's conversation (${visitorId ?? 'none'}): 404`);
  }
  const own = await call(
    app,
    'POST',
    '/api/v1/chat',
    {
      assistantId: a.assistant.publicId,
      message: 'and the price?',
      conversationId: a.widgetConversationId,
      visitorId: a.visitorId,
    },
    widget,
  );
  t.equal(own.status, 200, 'the visitor continues its own conversation');
  t.equal(own.body.conversationId, a.widgetConversationId);
  const owner = await call(
    app,
    'POST',
    '/api/v1/chat',
    { assistantId: a.assistant.id, message: 'owner here', conversationId: a.widgetConversationId },
    bearer(a.owner.secret),
  );
  t.equal(owner.status, 200, 'the owner reaches every conversation of its assistant');
});

t.test('keyless voice mint cannot attach to an API conversation', async (t) => {
  for (const visitorId of [undefined, a.visitorId]) {
    const res = await call(
      app,
      'POST',
      '/api/v1/voice/sessions',
      {
        assistantId: a.assistant.publicId,
        capabilities: ['heartbeat', 'playback_gate'],
        conversationId: a.apiConversationId,
        ...(visitorId ? { visitorId } : {}),
      },
      widget,
    );
    t.equal(res.status, 404, `voice mint on the API conversation (visitor ${visitorId ?? 'none'}): 404`);
    t.equal(res.body.code, 'VOICE_CONVERSATION_NOT_FOUND');
  }
  const own = await call(
    app,
    'POST',
    '/api/v1/voice/sessions',
    {
      assistantId: a.assistant.publicId,
      capabilities: ['heartbeat', 'playback_gate'],
      conversationId: a.widgetConversationId,
      visitorId: a.visitorId,
    },
    widget,
  );
  t.equal(own.status, 200, 'the visitor continues its own conversation by voice');
  t.equal(own.body.conversationId, a.widgetConversationId);
  const ended = await call(
    app,
    'POST',
    `/api/v1/voice/sessions/${own.body.sessionId}/end`,
    { visitorId: a.visitorId },
    widget,
  );
  t.equal(ended.status, 200, JSON.stringify(ended.body));
});

t.test("keyless feedback reaches only the visitor's own answers", async (t) => {
  for (const visitorId of [undefined, a.visitorId, OTHER]) {
    const res = await call(
      app,
      'POST',
      '/api/v1/feedback',
      { messageId: a.apiMessageId, rating: 'negative', ...(visitorId ? { visitorId } : {}) },
      widget,
    );
    t.equal(res.status, 404, `feedback on an API answer (visitor ${visitorId ?? 'none'}): 404`);
  }
  t.equal(
    (await app.database.sql`select count(*)::int as n from message_feedback where message_id = ${a.apiMessageId}`)[0]!
      .n,
    0,
    'no rating stored on the API answer',
  );
  t.equal(
    (
      await call(
        app,
        'POST',
        '/api/v1/feedback',
        { messageId: a.widgetMessageId, rating: 'positive', visitorId: OTHER },
        widget,
      )
    ).status,
    404,
    'another visitor: 404',
  );
  t.equal(
    (
      await call(
        app,
        'POST',
        '/api/v1/feedback',
        { messageId: a.widgetMessageId, rating: 'positive', visitorId: a.visitorId },
        widget,
      )
    ).status,
    200,
    'own answer: 200',
  );
});

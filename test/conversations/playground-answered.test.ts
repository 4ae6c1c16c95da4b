import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { HANDBOOK_MD, waitForDocument } from '../documents/fixtures.js';

/**
 * A playground chat (the dashboard's owner session, source playground) whose first question was answered from the
 * assistant's documents is listed answered, not "Not answered"; streamed as the dashboard streams it, or as JSON.
 */
t.test('a playground chat whose first question was answered is listed answered', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.deps.sql);
  const cookie = await login(app.url, owner.email, owner.password);
  const dashboard = dashboardHeaders(app.url, cookie);
  const created = await fetch(`${app.url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Shop helper', instructions: 'Answer from the handbook.' }),
  });
  const { assistant } = (await created.json()) as { assistant: { id: string; publicId: string } };
  const upload = await fetch(`${app.url}/api/assistants/${assistant.publicId}/uploads?filename=handbook.md`, {
    method: 'POST',
    headers: { ...dashboard, 'content-type': 'text/markdown' },
    body: HANDBOOK_MD,
  });
  t.equal(upload.status, 201, 'the handbook is uploaded');
  const { document } = (await upload.json()) as { document: { id: string } };
  await waitForDocument(
    async () =>
      (
        (await (
          await fetch(`${app.url}/api/v1/documents/${document.id}`, { headers: bearer(owner.secret) })
        ).json()) as { document: { status: string; error: string | null } }
      ).document,
  );

  const ask = async (streamed: boolean): Promise<{ conversationId: string; outcome: string }> => {
    const res = await fetch(`${app.url}/api/v1/chat`, {
      method: 'POST',
      headers: {
        ...dashboard,
        'content-type': 'application/json',
        ...(streamed ? { accept: 'text/event-stream' } : {}),
      },
      body: JSON.stringify({
        assistantId: assistant.id,
        message: 'Within how many days can I request a refund?',
        source: 'playground',
      }),
    });
    t.equal(res.status, 200);
    if (!streamed) return (await res.json()) as { conversationId: string; outcome: string };
    const body = await res.text();
    const meta = /event: meta\ndata: (.*)\n/.exec(body)?.[1];
    t.ok(meta, 'the stream carries its meta event');
    return JSON.parse(meta ?? '{}') as { conversationId: string; outcome: string };
  };

  for (const streamed of [true, false]) {
    const chat = await ask(streamed);
    t.equal(chat.outcome, 'answered', `the first question is answered (${streamed ? 'streamed' : 'JSON'})`);
    const list = await fetch(`${app.url}/api/v1/conversations?assistantId=${assistant.id}`, { headers: dashboard });
    t.equal(list.status, 200);
    const { conversations } = (await list.json()) as {
      conversations: Array<{ id: string; source: string; outcome: string | null }>;
    };
    const listed = conversations.find((c) => c.id === chat.conversationId);
    t.equal(listed?.source, 'playground', 'listed as a playground chat');
    t.equal(listed?.outcome, 'answered', 'listed answered, not "Not answered"');
    const notAnswered = await fetch(`${app.url}/api/v1/conversations?assistantId=${assistant.id}&outcome=no_answer`, {
      headers: dashboard,
    });
    const filtered = (await notAnswered.json()) as { conversations: Array<{ id: string }> };
    t.notOk(
      filtered.conversations.some((c) => c.id === chat.conversationId),
      'the "Not answered" filter leaves it out',
    );
  }
});

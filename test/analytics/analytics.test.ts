import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';

t.test('analytics: totals, outcomes, feedback ratio, daily series, top unanswered; refusals', async (t) => {
  const { url, deps } = await startTestApp(t);
  const owner = await createOwner(deps.sql);
  const other = await createOwner(deps.sql);
  const noScope = await createOwner(deps.sql, { scopes: ['chat', 'assistants:write'] });
  const api = (path: string, secret = owner.secret, body?: unknown) =>
    fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { ...bearer(secret), 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const { assistant } = (await (
    await api('/api/v1/assistants', owner.secret, {
      name: 'Stats',
      settings: { allowedDomains: ['https://shop.example'] },
    })
  ).json()) as { assistant: { id: string; publicId: string } };
  await deps.sql`
    insert into documents (id, assistant_id, account_id, type, name, status) values ('doc_stats1', ${assistant.id}, ${owner.accountId}, 'text', 'Prices', 'ready')`;
  await deps.sql`
    insert into document_chunks (document_id, assistant_id, ordinal, heading, content, tsv)
    values ('doc_stats1', ${assistant.id}, 0, 'Prices', 'The basic plan costs ten euros a month.',
            setweight(to_tsvector('english', 'Prices'), 'A') || setweight(to_tsvector('english', 'The basic plan costs ten euros a month.'), 'B'))`;
  await deps.sql`insert into assistant_lexemes (assistant_id, lexeme, df) select ${assistant.id}, l, 1 from unnest(tsvector_to_array(to_tsvector('english', 'Prices The basic plan costs ten euros a month.'))) l`;

  const ask = async (message: string) =>
    (await (await api('/api/v1/chat', owner.secret, { assistantId: assistant.id, message })).json()) as {
      messageId: string;
      outcome: string;
    };
  // Asked from the widget: keyless feedback may rate only its own visitor's answers.
  const answered = (await (
    await fetch(`${url}/api/v1/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://shop.example' },
      body: JSON.stringify({
        assistantId: assistant.publicId,
        message: 'How much does the basic plan cost?',
        visitorId: 'visitor-stat-2',
      }),
    })
  ).json()) as { messageId: string; outcome: string };
  t.equal(answered.outcome, 'answered');
  t.equal((await ask('Do you have parking?')).outcome, 'no_answer');
  await ask('do you have   PARKING?');
  await ask('Is there a dog policy?');
  const widgetChat = await fetch(`${url}/api/v1/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'https://shop.example' },
    body: JSON.stringify({
      assistantId: assistant.publicId,
      message: 'What does the basic plan cost?',
      visitorId: 'visitor-stat-1',
    }),
  });
  const { messageId } = (await widgetChat.json()) as { messageId: string };
  const rate = (id: string, rating: string, visitorId?: string) =>
    fetch(`${url}/api/v1/feedback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://shop.example' },
      body: JSON.stringify({ messageId: id, rating, ...(visitorId ? { visitorId } : {}) }),
    });
  t.equal((await rate(messageId, 'positive', 'visitor-stat-1')).status, 200);
  t.equal((await rate(answered.messageId, 'negative', 'visitor-stat-2')).status, 200);

  const res = await api(`/api/v1/analytics?assistantId=${assistant.publicId}`);
  t.equal(res.status, 200);
  const body = (await res.json()) as {
    metrics: {
      conversations: number;
      messages: number;
      answered: number;
      noAnswer: number;
      answeredRate: number;
      noAnswerRate: number;
      feedback: { positive: number; negative: number; positiveRatio: number };
    };
    daily: Array<{ date: string; conversations: number; messages: number; answered: number; noAnswer: number }>;
    topUnanswered: Array<{ question: string; count: number }>;
  };
  t.equal(body.metrics.conversations, 5);
  t.equal(body.metrics.messages, 10);
  t.equal(body.metrics.answered, 2);
  t.equal(body.metrics.noAnswer, 3);
  t.equal(body.metrics.answeredRate, 0.4);
  t.equal(body.metrics.noAnswerRate, 0.6);
  t.same(body.metrics.feedback, { positive: 1, negative: 1, positiveRatio: 0.5 });
  const day = (iso: string) => Date.parse(iso.slice(0, 10));
  const expectedDays =
    (day(new Date(Date.parse((body.metrics as unknown as { to: string }).to) - 1).toISOString()) -
      day((body.metrics as unknown as { from: string }).from)) /
      86_400_000 +
    1;
  t.ok(expectedDays >= 30, 'the default range covers thirty days back');
  t.equal(body.daily.length, expectedDays, 'one row per UTC day of the range, zeros included');
  const today = new Date().toISOString().slice(0, 10);
  t.same(body.daily.at(-1), {
    date: today,
    conversations: 5,
    messages: 10,
    answered: 2,
    noAnswer: 3,
    analysis: {
      analysed: 0,
      passed: 0,
      failed: 0,
      successRate: null,
      sentiment: { positive: 0, neutral: 0, negative: 0 },
    },
  });
  t.equal(body.topUnanswered[0]?.count, 2, 'the parking question, asked twice in different spelling');
  t.match(body.topUnanswered[0]?.question, /parking/i);
  t.equal(body.topUnanswered.length, 2);

  const empty = (await (
    await api(`/api/v1/analytics?assistantId=${assistant.id}&from=2020-01-01&to=2020-01-03`)
  ).json()) as typeof body;
  t.equal(empty.metrics.conversations, 0);
  t.equal(empty.metrics.answeredRate, null, 'no answers: no rate');
  t.same(
    empty.daily.map((d) => d.date),
    ['2020-01-01', '2020-01-02'],
  );

  t.equal(
    (await api(`/api/v1/analytics?assistantId=${assistant.id}`, other.secret)).status,
    404,
    'another account: 404',
  );
  t.equal(
    (await api(`/api/v1/analytics?assistantId=${assistant.id}`, noScope.secret)).status,
    403,
    'no analytics:read',
  );
  t.equal((await fetch(`${url}/api/v1/analytics?assistantId=${assistant.id}`)).status, 401);
  t.equal((await api('/api/v1/analytics')).status, 400, 'assistantId required');
  t.equal(
    (await api(`/api/v1/analytics?assistantId=${assistant.id}&from=2024-02-01&to=2024-01-01`)).status,
    400,
    'from after to',
  );
  t.equal(
    (await api(`/api/v1/analytics?assistantId=${assistant.id}&from=2020-01-01&to=2024-01-01`)).status,
    400,
    'range too long',
  );
  t.equal((await api(`/api/v1/analytics?assistantId=${assistant.id}&from=yesterday`)).status, 400, 'not a date');
});

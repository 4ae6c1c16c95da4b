import t from 'tap';
import { createOwner } from '../helpers/identity.js';
import { api, eventually, startWebhookApp } from '../webhooks/helpers.js';
import { ANALYSIS } from './helpers.js';

t.test('conversations filter by success, score, sentiment and structured fields; the CSV has them', async (t) => {
  const app = await startWebhookApp(t);
  const { sql } = app.database;
  const owner = await createOwner(sql);
  const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, {
    name: 'Orders',
    settings: { analysis: ANALYSIS },
  });
  t.equal(created.status, 201, created.text);
  const assistantId = created.body.assistant.id as string;

  async function converse(message: string): Promise<string> {
    const chat = await api(app.url, 'POST', '/api/v1/chat', owner.secret, { assistantId, message });
    t.equal(chat.status, 200, chat.text);
    const id = chat.body.conversationId as string;
    const queued = await api(app.url, 'POST', `/api/v1/conversations/${id}/analysis`, owner.secret);
    t.equal(queued.status, 202, queued.text);
    await eventually(async () => {
      const got = await api(app.url, 'GET', `/api/v1/conversations/${id}/analysis`, owner.secret);
      return got.body.analysis?.status === 'done';
    }, 'the analysis');
    return id;
  }
  const happy = await converse('Where is my order? The order number is 48213. Thanks, great service!');
  const angry = await converse('This is terrible, order number 777 arrived broken and I want a refund.');
  const quiet = await api(app.url, 'POST', '/api/v1/chat', owner.secret, { assistantId, message: 'Hello' });
  const unanalysed = quiet.body.conversationId as string;

  // A hosted model's verdicts, as they would have been stored: a pass for one, a score of 8 for the other.
  await sql`update conversation_analyses set result = jsonb_set(result, '{successEvaluation}',
    '{"rubric": "pass_fail", "verdict": true, "rationale": "Answered."}') where conversation_id = ${happy}`;
  await sql`update conversation_analyses set result = jsonb_set(result, '{successEvaluation}',
    '{"rubric": "score_1_10", "verdict": 4, "rationale": "Not solved."}') where conversation_id = ${angry}`;

  const ids = async (query: string) => {
    const res = await api(app.url, 'GET', `/api/v1/conversations?${query}`, owner.secret);
    t.equal(res.status, 200, `${query}: ${res.text}`);
    return res.body.conversations.map((c: any) => c.id);
  };
  t.same(await ids('sentiment=positive'), [happy], 'by sentiment');
  t.same(await ids('sentiment=negative'), [angry]);
  t.same(await ids('success=pass'), [happy], 'by success: a pass');
  t.same(await ids('success=fail'), [angry], 'a score below 6 is a fail');
  t.same(await ids('scoreMin=3&scoreMax=5'), [angry], 'by score');
  t.same(await ids('scoreMin=5'), [], 'no score of 5 or more');
  t.same(await ids('dataField=orderNumber&dataValue=482'), [happy], 'by a structured field and its value');
  t.same(await ids('dataValue=777'), [angry], 'by a value in any structured field');
  t.same(await ids('dataField=email'), [], 'a field never found matches nothing');
  t.same(await ids('dataField=orderNumber'), [angry, happy], 'a field that was found, newest first');
  t.same((await ids('')).length, 3, 'without filters, every conversation');

  const list = await api(app.url, 'GET', '/api/v1/conversations', owner.secret);
  const byId = new Map(list.body.conversations.map((c: any) => [c.id, c]));
  t.match(byId.get(happy), {
    analysis: {
      summary: /48213/,
      success: 'pass',
      verdict: true,
      sentiment: 'positive',
      structuredData: { orderNumber: 48213 },
    },
  });
  t.match(byId.get(unanalysed), { analysis: null }, 'a conversation never analysed says so');

  // Analytics: the success rate and sentiment of the analysed conversations, in total and per day.
  const analytics = await api(app.url, 'GET', `/api/v1/analytics?assistantId=${assistantId}`, owner.secret);
  t.equal(analytics.status, 200, analytics.text);
  const figures = {
    analysed: 2,
    passed: 1,
    failed: 1,
    successRate: 0.5,
    sentiment: { positive: 1, neutral: 0, negative: 1 },
  };
  t.same(analytics.body.metrics.analysis, figures);
  const today = new Date().toISOString().slice(0, 10);
  t.same(analytics.body.daily.find((d: any) => d.date === today)?.analysis, figures, 'today in the daily series');
  t.same(
    analytics.body.daily[0].analysis,
    { analysed: 0, passed: 0, failed: 0, successRate: null, sentiment: { positive: 0, neutral: 0, negative: 0 } },
    'a day without analyses has no rate',
  );

  // Filters are validated at the edge, each refusal naming its field.
  for (const [query, path] of [
    ['success=maybe', 'query.success'],
    ['scoreMin=11', 'query.scoreMin'],
    ['scoreMax=zero', 'query.scoreMax'],
    ['sentiment=happy', 'query.sentiment'],
    ['dataField=order-number', 'query.dataField'],
  ] as const) {
    const bad = await api(app.url, 'GET', `/api/v1/conversations?${query}`, owner.secret);
    t.equal(bad.status, 400, query);
    t.equal(bad.body.code, 'VALIDATION_FAILED', query);
    t.match(bad.body.details.issues, [{ path }], `${query} names ${path}`);
  }
  const crossed = await api(app.url, 'GET', '/api/v1/conversations?scoreMin=8&scoreMax=3', owner.secret);
  t.equal(crossed.status, 400);
  t.match(crossed.body, { code: 'CONVERSATION_FILTER_INVALID', details: { field: 'scoreMax' } });

  // The CSV export: summary, success, verdict, sentiment and one column per field of the schema.
  const csv = await fetch(`${app.url}/api/v1/conversations/export?sentiment=positive`, {
    headers: { authorization: `Bearer ${owner.secret}` },
  });
  const text = await csv.text();
  t.equal(csv.status, 200, text);
  const [header, row, end] = text.split('\r\n');
  t.equal(end, '', 'one row');
  t.match(
    header,
    /,outcome,firstMessage,summary,success,successVerdict,sentiment,data\.callbackRequested,data\.email,data\.orderNumber,data\.plan$/,
  );
  const cells = row!.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((c) => c.replace(/,$/, ''));
  const column = (name: string) => cells[header!.split(',').indexOf(name)];
  t.equal(column('id'), happy);
  t.match(column('summary'), /48213/);
  t.equal(column('success'), 'pass');
  t.equal(column('successVerdict'), 'true');
  t.equal(column('sentiment'), 'positive');
  t.equal(column('data.orderNumber'), '48213');
  t.equal(column('data.email'), '', 'a field not found is empty');
});

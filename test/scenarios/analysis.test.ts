import t from 'tap';
import { ANALYSIS } from '../analysis/helpers.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { api, waitForRun } from './helpers.js';

/**
 * An `analysis` expectation judged on the conversation's post-call analysis (the local engine): the structured field
 * that matches passes, the one that does not fails with the value found. A chat is analysed only once idle (5 minutes
 * here), so a chat scenario asks for its analysis itself when its turns are done.
 */
t.test('analysis expectations: the matching structured field passes, a wrong one fails with the value', async (t) => {
  const app = await startTestApp(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Orders' });
  t.equal(created.status, 201, created.text);
  const assistantId = created.body.assistant.id as string;
  const patched = await api(app.url, 'PATCH', `/api/v1/assistants/${assistantId}`, owner.secret, {
    settings: { analysis: { ...ANALYSIS, chatIdleMinutes: 5 } },
  });
  t.equal(patched.status, 200, patched.text);

  const turns = [{ say: 'Where is my order? The order number is 48213, please call me back.' }];
  for (const [name, equals] of [
    ['right order number', 48213],
    ['wrong order number', 11111],
  ] as const) {
    const res = await api(app.url, 'POST', `/api/v1/assistants/${assistantId}/scenarios`, owner.secret, {
      name,
      transport: 'chat',
      turns,
      expect: [{ analysis: { field: 'orderNumber', equals } }],
    });
    t.equal(res.status, 201, res.text);
  }
  const started = await api(app.url, 'POST', `/api/v1/assistants/${assistantId}/scenario-runs`, owner.secret, {
    concurrency: 2,
  });
  t.equal(started.status, 202, started.text);

  const { run, results } = await waitForRun(app.url, owner.secret, assistantId, started.body.run.id, 45_000);
  t.match(run, { status: 'done', figures: { passed: 1, failed: 1, errored: 0 } });
  const [right, wrong] = results;
  t.match(right, {
    status: 'passed',
    verdicts: [{ passed: true, evidence: 'analysis orderNumber = 48213' }],
  });
  t.match(wrong, {
    status: 'failed',
    verdicts: [
      { passed: false, expectation: { analysis: { equals: 11111 } }, evidence: 'analysis orderNumber = 48213' },
    ],
  });
});

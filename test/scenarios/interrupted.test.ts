import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { api, eventually } from './helpers.js';

/** A run whose instance stops mid-run ends failed (SCENARIO_RUN_INTERRUPTED), as another instance then shows it. */
t.test('a run cut short by its instance stopping is marked interrupted', async (t) => {
  const first = await startTestApp(t, { env: { CHAT_PROVIDER: 'local' } });
  const owner = await createOwner(first.database.sql);
  const made = await api(first.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Notes' });
  const assistantId: string = made.body.assistant.id;
  const created = await api(first.url, 'POST', `/api/v1/assistants/${assistantId}/scenarios`, owner.secret, {
    name: 'slow',
    transport: 'chat',
    turns: [{ say: 'Hello' }, { wait: 60_000 }, { say: 'Still there?' }],
    expect: [{ mustSay: 'hello' }],
  });
  t.equal(created.status, 201, created.text);
  const started = await api(first.url, 'POST', `/api/v1/assistants/${assistantId}/scenario-runs`, owner.secret, {});
  t.equal(started.status, 202);
  const path = `/api/v1/assistants/${assistantId}/scenario-runs/${started.body.run.id}`;
  await eventually(async () => {
    const res = await api(first.url, 'GET', path, owner.secret);
    return res.body.results?.[0]?.status === 'running';
  }, 'the scenario to be running');
  await first.stop();

  const second = await startTestApp(t, { database: first.database, redisPrefix: first.redisPrefix });
  const read = await api(second.url, 'GET', path, owner.secret);
  t.match(read.body, {
    run: { status: 'failed', errorCode: 'SCENARIO_RUN_INTERRUPTED', completedCount: 1 },
    results: [{ status: 'error', error: 'The run was interrupted (the server stopped).' }],
  });
});

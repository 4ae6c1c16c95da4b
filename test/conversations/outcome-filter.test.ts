import t from 'tap';
import { createAssistant } from '../../src/assistants/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { voiceCallWriter } from './voice-calls.js';

/**
 * The list's outcome filter selects by the outcome the list shows: a voice call whose last question was heard but
 * never answered is listed "Not answered", so the "Not answered" filter finds it and the "Answered" filter leaves it
 * out, even though its first question was answered; the CSV export of the same filter agrees.
 */
t.test('the outcome filter selects the conversations the list shows with that outcome', async (t) => {
  const app = await startTestApp(t);
  const sql = app.database.sql;
  const owner = await createOwner(sql);
  const assistant = await createAssistant(sql, { accountId: owner.accountId }, { name: 'Voice', instructions: '' });
  const call = voiceCallWriter(sql, owner, assistant);
  const stuck = await call(['user', 'assistant', 'user']);
  const answered = await call(['user', 'assistant', 'user', 'assistant']);
  const silent = await call([]);

  const list = async (query: string) => {
    const res = await fetch(`${app.url}/api/v1/conversations?assistantId=${assistant.id}${query}`, {
      headers: bearer(owner.secret),
    });
    t.equal(res.status, 200);
    return ((await res.json()) as { conversations: Array<{ id: string; outcome: string | null }> }).conversations;
  };
  const all = await list('');
  t.equal(all.find((c) => c.id === stuck)?.outcome, 'no_answer', 'the stuck call is listed not answered');
  t.equal(all.find((c) => c.id === answered)?.outcome, 'answered');

  t.same(
    (await list('&outcome=no_answer')).map((c) => c.id),
    [stuck],
    '"Not answered" finds the call whose last question got no answer',
  );
  t.same(
    (await list('&outcome=answered')).map((c) => c.id),
    [answered],
    '"Answered" leaves it out',
  );
  t.same(await list('&outcome=model_failure'), []);
  for (const outcome of ['answered', 'no_answer', 'model_failure']) {
    const filtered = await list(`&outcome=${outcome}`);
    t.ok(
      filtered.every((c) => c.outcome === outcome),
      `every conversation the ${outcome} filter selects is listed ${outcome}`,
    );
    t.same(
      filtered.map((c) => c.id),
      all.filter((c) => c.outcome === outcome).map((c) => c.id),
      `the ${outcome} filter selects every conversation listed ${outcome}`,
    );
  }
  t.notOk(all.find((c) => c.id === silent)?.outcome, 'a call without messages has no outcome');

  const csv = await fetch(`${app.url}/api/v1/conversations/export?assistantId=${assistant.id}&outcome=no_answer`, {
    headers: bearer(owner.secret),
  });
  t.equal(csv.status, 200);
  const lines = (await csv.text()).trim().split(/\r?\n/).slice(1);
  t.same(
    lines.map((l) => l.split(',')[0]),
    [stuck],
    'the CSV export of "Not answered" holds the same call',
  );
});

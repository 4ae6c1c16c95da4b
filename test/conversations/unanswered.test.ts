import t from 'tap';
import { createAssistant } from '../../src/assistants/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { voiceCallWriter } from './voice-calls.js';

/**
 * A voice call whose last question got no answer (the caller hung up waiting, or the voice went quiet) is listed as
 * not answered, not as answered because an earlier question was; a call whose every question was answered is
 * answered.
 */
t.test('a conversation whose last question has no answer is listed not answered', async (t) => {
  const app = await startTestApp(t);
  const sql = app.database.sql;
  const owner = await createOwner(sql);
  const assistant = await createAssistant(sql, { accountId: owner.accountId }, { name: 'Voice', instructions: '' });
  const call = voiceCallWriter(sql, owner, assistant);
  const stuck = await call(['user', 'assistant', 'user']);
  const answered = await call(['user', 'assistant', 'user', 'assistant']);
  const res = await fetch(`${app.url}/api/v1/conversations?assistantId=${assistant.id}`, {
    headers: bearer(owner.secret),
  });
  t.equal(res.status, 200);
  const { conversations } = (await res.json()) as { conversations: Array<{ id: string; outcome: string | null }> };
  t.equal(conversations.find((c) => c.id === stuck)?.outcome, 'no_answer', 'the unanswered question shows');
  t.equal(conversations.find((c) => c.id === answered)?.outcome, 'answered');
});

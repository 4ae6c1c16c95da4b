import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, login } from '../helpers/identity.js';
import { waitFor } from '../voice/helpers.js';

/**
 * 8 parallel `POST /documents/{id}/reprocess` answered 500 `deadlock detected`, and the ingestion
 * worker logged deadlocks. Every writer now takes its locks in one order: assistant terms, document row, job row.
 */
const app = await startTestApp(t, {
  knowledge: { documents: { pollMs: 20 } },
  env: { API_RATE_LIMIT_PER_MINUTE: '100000' },
});
const sql = app.database.sql;
const owner = await createOwner(sql);
const cookie = await login(app.url, owner.email, owner.password);
const key = bearer(owner.secret);
const assistant = (await (
  await fetch(`${app.url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Deadlock bot' }),
  })
).json()) as { assistant: { id: string } };
const assistantId = assistant.assistant.id;
const text = Array.from(
  { length: 200 },
  (_, i) =>
    `## Section ${i}\n\nParagraph ${i} explains topic number ${i} with words like alpha${i} beta${i} gamma${i}.`,
).join('\n\n');

async function addDocument(): Promise<string> {
  const res = await fetch(`${app.url}/api/assistants/${assistantId}/sources`, {
    method: 'POST',
    headers: { cookie, origin: app.url, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'text', name: 'Long document', text }),
  });
  if (res.status !== 201) throw new Error(`add source: ${res.status}`);
  return ((await res.json()) as { document: { id: string } }).document.id;
}
const statusOf = async (id: string) =>
  (await sql<Array<{ status: string }>>`select status from documents where id = ${id}`)[0]?.status;
const reprocess = (id: string) =>
  fetch(`${app.url}/api/v1/documents/${id}/reprocess`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: '{}',
  });
const deadlocks = () =>
  app.logs
    .text()
    .split('\n')
    .filter((l) => /deadlock/i.test(l));

t.test(
  'a reprocess while the worker stores the same document: no deadlock (the interleaving that deadlocked)',
  async (t) => {
    const id = await addDocument();
    await waitFor(async () => (await statusOf(id)) === 'ready', 'first ingestion');
    // Hold the assistant's terms lock, so the worker stops inside its store transaction.
    const held = await sql.reserve();
    await held`begin`;
    await held`select pg_advisory_xact_lock(hashtext('parley:lexemes'), hashtext(${assistantId}))`;
    try {
      t.equal((await reprocess(id)).status, 202, 'first reprocess queued');
      await waitFor(
        async () => (await sql`select 1 from pg_locks where locktype = 'advisory' and not granted`).length > 0,
        'the worker waiting in its store transaction',
      );
      // Before the fix the worker held the job row here and this request waited on it while holding the document row.
      const second = reprocess(id);
      await new Promise((r) => setTimeout(r, 300));
      await held`commit`;
      const res = await second;
      t.equal(res.status, 202, `second reprocess answered ${res.status}: ${await res.text()}`);
    } finally {
      held.release();
    }
    await waitFor(async () => (await statusOf(id)) === 'ready', 'ingestion after reprocess', 20_000);
    t.same(deadlocks(), [], 'no deadlock logged');
  },
);

t.test('8 parallel reprocess calls, 10 rounds, a worker running: never a 5xx, no deadlock logged', async (t) => {
  const ids = [await addDocument(), await addDocument()];
  const statuses: number[] = [];
  for (let round = 0; round < 10; round++) {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => reprocess(ids[i % 2]!)));
    for (const res of answers) {
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    await new Promise((r) => setTimeout(r, 30 * (round % 3)));
  }
  t.same([...new Set(statuses)], [202], 'every reprocess answered 202');
  for (const id of ids) await waitFor(async () => (await statusOf(id)) === 'ready', `document ${id} ready`, 30_000);
  t.same(deadlocks(), [], 'no deadlock logged');
});

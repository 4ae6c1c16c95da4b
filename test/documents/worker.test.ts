import t, { type Test } from 'tap';
import { createAssistant } from '../../src/assistants/index.js';
import { createIngestionWorker, publicAddressesOnly } from '../../src/documents/index.js';
import { chunkText } from '../../src/documents/chunker.js';
import { claimJob } from '../../src/documents/queries.js';
import { addSource } from '../../src/documents/service.js';
import type { IngestionResult } from '../../src/documents/ingestion.js';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { createTestMeter } from '../helpers/metering.js';
import { waitFor } from '../helpers/wait.js';

async function setup(t: Test) {
  const db = await createTestDatabase(t);
  const owner = await createOwner(db.sql);
  const assistant = await createAssistant(db.sql, owner, { name: 'Worker test' });
  // The default deployment mode: every job is metered and recorded, never refused.
  const { meter } = createTestMeter(db.sql, { config: { HOSTED_USAGE_ENFORCEMENT: 'shadow' } });
  const add = (text: string) =>
    addSource({ sql: db.sql, addressPolicy: publicAddressesOnly }, owner, assistant.id, {
      type: 'text',
      name: 'Doc',
      text,
    });
  const status = async (id: string) =>
    (
      await db.sql<
        Array<{ status: string; error: string | null; chunkCount: number }>
      >`select status, error, chunk_count from documents where id = ${id}`
    )[0]!;
  const job = async (id: string) =>
    (await db.sql<Array<{ attempts: number }>>`select attempts from ingestion_jobs where document_id = ${id}`)[0];
  return { db, owner, assistant, add, status, job, meter };
}

const chunksOf = (text: string): IngestionResult => ({ chunks: chunkText(text) });

t.test('a job whose worker died mid-way is claimed again once its lease expires', async (t) => {
  const { db, add, status, meter } = await setup(t);
  const doc = await add('# Title\n\nSome text to index.');
  // A worker claims the job and dies (never finishes, never releases).
  const dead = await claimJob(db.sql, 'dead-worker-token', 200);
  t.equal(dead?.documentId, doc.id);
  const worker = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    process: async (d) => chunksOf((d.source ?? Buffer.alloc(0)).toString()),
    leaseMs: 200,
  });
  t.equal(await worker.runOnce(), false, 'while the lease holds, nobody else takes the job');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await worker.runOnce(), true, 'after the lease expired, the job is claimed again');
  t.same(await status(doc.id), { status: 'ready', error: null, chunkCount: 1 });
  t.equal((await db.sql`select 1 from ingestion_jobs where document_id = ${doc.id}`).length, 0, 'the job is done');
});

t.test('a stale worker cannot finish a job that was claimed again (fencing by lease token)', async (t) => {
  const { db, add, status, meter } = await setup(t);
  const doc = await add('Original text.');
  let release!: () => void;
  let processing = false;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    leaseMs: 150,
    process: async () => {
      processing = true;
      await gate;
      return chunksOf('stale result that must not land');
    },
  });
  const slowRun = slow.runOnce();
  await waitFor(() => processing, 'the slow worker to claim the job');
  // Reprocess while the slow worker holds the job: its lease token is replaced.
  await db.sql`update ingestion_jobs set lease_token = null, locked_until = null, attempts = 0 where document_id = ${doc.id}`;
  const fresh = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    process: async () => chunksOf('fresh result'),
  });
  t.equal(await fresh.runOnce(), true);
  release();
  await slowRun;
  const [row] = await db.sql<
    Array<{ content: string }>
  >`select content from document_chunks where document_id = ${doc.id}`;
  t.equal(row?.content, 'fresh result', 'the stale result was dropped');
  t.equal((await status(doc.id)).status, 'ready');
});

t.test('retries with backoff, then fails with the error message after max attempts', async (t) => {
  const { db, add, status, job, meter } = await setup(t);
  const doc = await add('text');
  let calls = 0;
  const worker = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    backoffMs: () => 0,
    process: async () => {
      calls++;
      throw new Error('transient boom');
    },
  });
  await db.sql`update ingestion_jobs set max_attempts = 3 where document_id = ${doc.id}`;
  t.equal(await worker.runOnce(), true);
  t.same(
    await status(doc.id),
    { status: 'pending', error: 'Processing failed unexpectedly.', chunkCount: 0 },
    'pending again, with the error shown',
  );
  t.equal((await job(doc.id))?.attempts, 1);
  await worker.runOnce();
  await worker.runOnce();
  t.equal(calls, 3);
  t.same(await status(doc.id), { status: 'failed', error: 'Processing failed unexpectedly.', chunkCount: 0 });
  t.equal(await job(doc.id), undefined, 'no job left');
  t.equal(await worker.runOnce(), false, 'nothing more to do');
});

t.test('stop() during a job hands it back for the next worker at once', async (t) => {
  const { db, add, status, job, meter } = await setup(t);
  const doc = await add('text');
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const worker = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    pollMs: 20,
    process: (_doc, signal) =>
      new Promise((_resolve, reject) => {
        started();
        signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      }),
  });
  worker.start();
  await running;
  t.equal((await status(doc.id)).status, 'processing');
  await worker.stop();
  t.equal((await status(doc.id)).status, 'pending', 'back to pending');
  t.equal((await job(doc.id))?.attempts, 0, 'the interrupted attempt does not count');
  const next = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    process: async () => chunksOf('done'),
  });
  t.equal(await next.runOnce(), true, 'claimable immediately');
  t.equal((await status(doc.id)).status, 'ready');
});

t.test('two workers never process the same job (FOR UPDATE SKIP LOCKED)', async (t) => {
  const { db, add, meter } = await setup(t);
  const docs = await Promise.all(Array.from({ length: 6 }, (_, i) => add(`Document number ${i}.`)));
  const seen: string[] = [];
  const make = () =>
    createIngestionWorker({
      sql: db.sql,
      meter,
      log: captureLogger().log,
      process: async (d) => {
        seen.push(d.id);
        await new Promise((r) => setTimeout(r, 10));
        return chunksOf('x');
      },
    });
  const a = make();
  const b = make();
  const drain = async (w: ReturnType<typeof make>) => {
    while (await w.runOnce()) {
      /* keep going */
    }
  };
  await Promise.all([drain(a), drain(b)]);
  t.equal(seen.length, docs.length, 'each document processed once');
  t.equal(new Set(seen).size, docs.length);
});

import t, { type Test } from 'tap';
import { createAssistant } from '../../src/assistants/index.js';
import { createIngestionWorker, INGESTION_REFUSED_MESSAGE, publicAddressesOnly } from '../../src/documents/index.js';
import { chunkText } from '../../src/documents/chunker.js';
import type { IngestionResult } from '../../src/documents/ingestion.js';
import { addSource, reprocessDocument } from '../../src/documents/service.js';
import { priceIngestion, type EnforcementMode } from '../../src/metering/index.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { balanceOf, createTestMeter, setPlan } from '../helpers/metering.js';

/** Three passages (one per heading), so the price is visibly per chunk. */
const TEXT = '# One\n\nThe first passage.\n\n# Two\n\nThe second passage.\n\n# Three\n\nThe third passage.';
const CHUNKS = chunkText(TEXT).length;
const chunksOf = (text: string): IngestionResult => ({ chunks: chunkText(text) });
/** A hosted ingestion step's price (a chunk costs nothing on this machine): the metering path is the same. */
const HOSTED_CHUNK_MICROS = 20;
const hostedPrice = (chunks: number) => priceIngestion(chunks, HOSTED_CHUNK_MICROS);

/** Polls until `check` answers a value (the app's own worker runs in the background); throws after ~10 s instead of hanging. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up waiting: ${what}`);
}

async function setup(t: Test, mode: EnforcementMode) {
  const db = await createTestDatabase(t);
  const owner = await createOwner(db.sql);
  const assistant = await createAssistant(db.sql, owner, { name: 'Metered ingestion' });
  const { meter } = createTestMeter(db.sql, {
    config: { HOSTED_USAGE_ENFORCEMENT: mode },
    ingestionChunkMicros: HOSTED_CHUNK_MICROS,
  });
  let processed = 0;
  const worker = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    backoffMs: () => 0,
    process: async (d) => {
      processed++;
      return chunksOf((d.source ?? Buffer.alloc(0)).toString());
    },
  });
  const serviceDeps = { sql: db.sql, addressPolicy: publicAddressesOnly };
  const add = (text = TEXT) => addSource(serviceDeps, owner, assistant.id, { type: 'text', name: 'Doc', text });
  const document = async (id: string) =>
    (
      await db.sql<
        Array<{ status: string; error: string | null; chunkCount: number }>
      >`select status, error, chunk_count from documents where id = ${id}`
    )[0]!;
  const events = () =>
    db.sql<
      Array<{
        outcome: string;
        kind: string;
        source: string;
        mode: string;
        units: number;
        costMicros: number;
        assistantId: string;
      }>
    >`
      select outcome, kind, source, mode, units, cost_micros, assistant_id from usage_events where account_id = ${owner.accountId} order by created_at, id`;
  const openReservations = async () =>
    (
      await db.sql<
        [{ n: number }]
      >`select count(*)::int8 as n from usage_reservations where account_id = ${owner.accountId} and status = 'open'`
    )[0].n;
  return {
    db,
    owner,
    assistant,
    meter,
    worker,
    add,
    document,
    events,
    openReservations,
    serviceDeps,
    processed: () => processed,
  };
}

t.test('enforce, within budget: one settled ingestion event priced per stored chunk, not a request', async (t) => {
  const { db, owner, assistant, worker, add, document, events, openReservations } = await setup(t, 'enforce');
  const doc = await add();
  t.equal(await worker.runOnce(), true);
  t.same(await document(doc.id), { status: 'ready', error: null, chunkCount: CHUNKS });
  const price = hostedPrice(CHUNKS);
  t.ok(price > 0);
  t.same(
    (await events()).map((e) => ({ ...e })),
    [
      {
        outcome: 'settled',
        kind: 'ingestion',
        source: 'dashboard',
        mode: 'enforce',
        units: CHUNKS,
        costMicros: price,
        assistantId: assistant.id,
      },
    ],
  );
  const balance = await balanceOf(db.sql, owner.accountId);
  t.equal(balance!.consumedMicros, price, 'the spend is on the balance');
  t.equal(balance!.reservedMicros, 0, 'nothing left held');
  t.equal(balance!.requestCount, 0, 'ingestion is metered but is not a request');
  t.equal(await openReservations(), 0);
});

t.test(
  'enforce, over budget: the document fails with an owner-facing message, is not retried, and can be reprocessed later',
  async (t) => {
    const { db, owner, worker, add, document, events, openReservations, serviceDeps, processed } = await setup(
      t,
      'enforce',
    );
    // A budget smaller than the document's price.
    await setPlan(db.sql, owner.accountId, 'free', hostedPrice(CHUNKS) - 1);
    const doc = await add();
    t.equal(await worker.runOnce(), true);
    t.same(
      await document(doc.id),
      { status: 'failed', error: INGESTION_REFUSED_MESSAGE, chunkCount: 0 },
      'failed, with the reason',
    );
    t.match(INGESTION_REFUSED_MESSAGE, /usage budget/);
    t.notOk(
      await db.sql`select 1 from document_chunks where document_id = ${doc.id}`.then((r) => r.length),
      'nothing stored',
    );
    t.equal(await worker.runOnce(), false, 'no job left: a refusal is not retried');
    t.equal(processed(), 1);
    t.same(await events(), [], 'a refused job holds and records nothing');
    t.equal(await openReservations(), 0);
    t.equal((await balanceOf(db.sql, owner.accountId))!.consumedMicros, 0);

    // The owner gets more room (an upgrade or credit) and reprocesses.
    await setPlan(db.sql, owner.accountId, 'free', null);
    await reprocessDocument(serviceDeps, owner, doc.id);
    t.equal(await worker.runOnce(), true);
    t.same(await document(doc.id), { status: 'ready', error: null, chunkCount: CHUNKS });
    t.same(
      (await events()).map((e) => e.outcome),
      ['settled'],
    );
    t.equal((await balanceOf(db.sql, owner.accountId))!.consumedMicros, hostedPrice(CHUNKS));
  },
);

t.test('enforce, suspended hosting account: the document fails saying so', async (t) => {
  const { db, owner, worker, add, document, events } = await setup(t, 'enforce');
  await db.sql`update hosting_accounts set status = 'suspended' where account_id = ${owner.accountId}`;
  const doc = await add();
  await worker.runOnce();
  const row = await document(doc.id);
  t.equal(row.status, 'failed');
  t.match(row.error, /^Not processed: .*suspended/);
  t.same(await events(), []);
  t.equal(await worker.runOnce(), false, 'not retried');
});

t.test('shadow, over budget: the document is ingested and the spend recorded', async (t) => {
  const { db, owner, worker, add, document, events, openReservations } = await setup(t, 'shadow');
  await setPlan(db.sql, owner.accountId, 'free', 1);
  const doc = await add();
  await worker.runOnce();
  t.same(await document(doc.id), { status: 'ready', error: null, chunkCount: CHUNKS }, 'shadow never refuses');
  const recorded = await events();
  t.same(
    recorded.map((e) => ({ outcome: e.outcome, mode: e.mode, units: e.units, costMicros: e.costMicros })),
    [{ outcome: 'settled', mode: 'shadow', units: CHUNKS, costMicros: hostedPrice(CHUNKS) }],
  );
  t.equal((await balanceOf(db.sql, owner.accountId))!.consumedMicros, hostedPrice(CHUNKS), 'recorded beyond the limit');
  t.equal(await openReservations(), 0);
});

t.test('off: the document is ingested and nothing is written to metering', async (t) => {
  const { db, owner, worker, add, document } = await setup(t, 'off');
  const doc = await add();
  await worker.runOnce();
  t.same(await document(doc.id), { status: 'ready', error: null, chunkCount: CHUNKS });
  const [counts] = await db.sql<[{ reservations: number; events: number; balances: number }]>`
    select (select count(*) from usage_reservations where account_id = ${owner.accountId})::int8 as reservations,
           (select count(*) from usage_events where account_id = ${owner.accountId})::int8 as events,
           (select count(*) from usage_balances where account_id = ${owner.accountId})::int8 as balances`;
  t.same({ ...counts }, { reservations: 0, events: 0, balances: 0 });
});

t.test('a retried job is billed once: the failed attempt is released, the successful one settled', async (t) => {
  const { db, owner, assistant, worker, add, document, events, openReservations } = await setup(t, 'enforce');
  const doc = await add();
  // Storing fails after admission (the assistant's search language cannot be used): a retryable failure.
  await db.sql`update assistants set language = 'no_such_language' where id = ${assistant.id}`;
  t.equal(await worker.runOnce(), true);
  const pending = await document(doc.id);
  t.equal(pending.status, 'pending', 'scheduled for a retry');
  t.same(
    (await events()).map((e) => ({ outcome: e.outcome, costMicros: e.costMicros })),
    [{ outcome: 'released', costMicros: 0 }],
  );
  t.equal(await openReservations(), 0, 'the failed attempt holds nothing');

  await db.sql`update assistants set language = 'english' where id = ${assistant.id}`;
  t.equal(await worker.runOnce(), true);
  t.same(await document(doc.id), { status: 'ready', error: null, chunkCount: CHUNKS });
  t.same(
    (await events()).map((e) => e.outcome),
    ['released', 'settled'],
    'one event per attempt, one of them billed',
  );
  const balance = await balanceOf(db.sql, owner.accountId);
  t.equal(balance!.consumedMicros, hostedPrice(CHUNKS), 'billed exactly once');
  t.equal(balance!.reservedMicros, 0);
  t.equal(await openReservations(), 0);
});

t.test('a stale worker fenced out by a newer claim does not bill; the newer claim does', async (t) => {
  const { db, owner, meter, add, document, events, openReservations } = await setup(t, 'enforce');
  const doc = await add('Original text.');
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const slow = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    leaseMs: 60_000,
    process: async () => {
      entered();
      await gate;
      return chunksOf('stale result that must not land');
    },
  });
  const slowRun = slow.runOnce();
  await inside;
  // Reprocessed while the slow worker holds the job: its lease token is gone.
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
  t.equal((await document(doc.id)).status, 'ready');
  const recorded = await events();
  t.same(recorded.map((e) => e.outcome).sort(), ['released', 'settled'], 'the stale attempt was released, not settled');
  t.equal(
    (await balanceOf(db.sql, owner.accountId))!.consumedMicros,
    hostedPrice(1),
    'only the stored result is billed',
  );
  t.equal(await openReservations(), 0);
});

t.test(
  'through the app (enforce): ingestion runs on this machine, so it costs $0 and a spent budget does not refuse it',
  async (t) => {
    const app = await startTestApp(t, {
      env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' },
      knowledge: { documents: { pollMs: 20 } },
    });
    const sql = app.deps.sql;

    async function ingest(budgetMicros: number | null) {
      const owner = await createOwner(sql);
      if (budgetMicros !== null) await setPlan(sql, owner.accountId, 'free', budgetMicros);
      const assistant = await createAssistant(sql, owner, { name: 'App ingestion' });
      const cookie = await login(app.url, owner.email, owner.password);
      const res = await fetch(`${app.url}/api/assistants/${assistant.id}/sources`, {
        method: 'POST',
        headers: dashboardHeaders(app.url, cookie),
        body: JSON.stringify({ type: 'text', name: 'Handbook', text: TEXT }),
      });
      t.equal(res.status, 201);
      const { document } = (await res.json()) as { document: { id: string } };
      // The app's own worker picks the job up; wait until the document leaves pending/processing.
      const settled = await eventually('the document to be ready or failed', async () => {
        const get = await fetch(`${app.url}/api/v1/documents/${document.id}`, {
          headers: { authorization: `Bearer ${owner.secret}` },
        });
        const body = (await get.json()) as { document: { status: string; error: string | null; chunkCount: number } };
        return body.document.status === 'ready' || body.document.status === 'failed' ? body.document : undefined;
      });
      return { owner, document: settled };
    }

    const spent = await ingest(0);
    t.has(spent.document, { status: 'ready', error: null, chunkCount: CHUNKS }, 'a $0 budget: still ingested');
    const fine = await ingest(null);
    t.has(fine.document, { status: 'ready', error: null, chunkCount: CHUNKS });
    // The settle follows the commit of the chunks (its own transaction): wait for the worker to close the reservation.
    const closed = async () =>
      (
        await sql<
          [{ n: number }]
        >`select count(*)::int8 as n from usage_reservations where account_id = ${fine.owner.accountId} and status <> 'open'`
      )[0].n;
    await eventually('the ingestion reservation to close', async () => ((await closed()) > 0 ? true : undefined));
    const billed = await sql<Array<{ outcome: string; source: string; costMicros: number }>>`
    select outcome, source, cost_micros from usage_events where account_id = ${fine.owner.accountId} and kind = 'ingestion'`;
    t.same(
      billed.map((e) => ({ ...e })),
      [{ outcome: 'settled', source: 'dashboard', costMicros: 0 }],
      'the app meters its worker: its chunks counted, priced $0',
    );
    t.equal(priceIngestion(CHUNKS), 0, 'no invented price for work done on this machine');
  },
);

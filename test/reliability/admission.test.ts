import t from 'tap';
import { Admission } from '../../src/admission/index.js';
import { createAssistant } from '../../src/assistants/index.js';
import { createIngestionWorker, publicAddressesOnly } from '../../src/documents/index.js';
import { chunkText } from '../../src/documents/chunker.js';
import { addSource } from '../../src/documents/service.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { createTestMeter } from '../helpers/metering.js';
import { mintAsWidget, post, startVoiceApp, voiceAssistant } from '../voice/helpers.js';

/**
 * Admission control beyond chat: voice mints wait in a pool of their own (per-tenant queues, 503 SERVICE_OVERLOADED
 * with Retry-After past them, before any query or provider start), and the ingestion worker runs a job only in a free
 * slot of the work pool. The mint pool here is one slot wide and one mint deep per tenant, and the slow assistant's
 * provider start takes 1.5 s (the simulator's slow-start), so a slot stays taken while the others arrive.
 */
const SLOW = 'Be brief. [sim:slow-start=1500]';

const tally = (statuses: number[]) =>
  JSON.stringify(Object.fromEntries(statuses.map((s) => [s, statuses.filter((x) => x === s).length])));

t.test(
  'voice mints: a tenant past its queue is refused 503 with Retry-After; another tenant still gets in',
  async (t) => {
    const app = await startVoiceApp(t, {
      env: {
        ADMISSION_MINT_MAX_IN_FLIGHT: '1',
        ADMISSION_MINT_QUEUE_PER_TENANT: '1',
        ADMISSION_MINT_QUEUE_WAIT_MS: '30000',
        API_RATE_LIMIT_PER_MINUTE: '10000',
      },
    });
    const flooder = await createOwner(app.database.sql);
    const other = await createOwner(app.database.sql);
    const slow = await voiceAssistant(app, flooder, { instructions: SLOW });
    const quick = await voiceAssistant(app, other);
    const mint = (secret: string, assistantId: string) =>
      post(
        app.url,
        '/api/v1/voice/sessions',
        { assistantId, capabilities: ['heartbeat', 'playback_gate'] },
        bearer(secret),
      );

    const [floods, theOther] = await Promise.all([
      Promise.all(Array.from({ length: 4 }, () => mint(flooder.secret, slow.publicId))),
      mint(other.secret, quick.publicId),
    ]);
    const statuses = floods.map((r) => r.status);
    t.same(
      statuses.filter((s) => s !== 200 && s !== 503),
      [],
      `the flood answers 200 or 503, nothing else (${tally(statuses)})`,
    );
    t.ok(statuses.filter((s) => s === 200).length >= 1, 'the flooding tenant still gets its admitted mints');
    const refused = floods.filter((r) => r.status === 503);
    t.ok(refused.length >= 1, `past one running and one waiting mint, the tenant is refused (${tally(statuses)})`);
    for (const r of refused) {
      t.equal(r.body.code, 'SERVICE_OVERLOADED');
      t.ok(Number(r.headers.get('retry-after')) >= 1, 'with Retry-After');
    }
    t.equal(theOther.status, 200, "another tenant's mint waits in its own queue and is admitted");
    const [calls] = await app.database.sql<Array<{ n: number }>>`
    select count(*)::int as n from voice_sessions where account_id = ${flooder.accountId}`;
    t.equal(calls!.n, statuses.filter((s) => s === 200).length, 'a refused mint left no call row behind');
    const [open] = await app.database.sql<Array<{ n: number }>>`
    select count(*)::int as n from usage_reservations r where r.status = 'open' and not exists
      (select 1 from voice_sessions s where s.id = r.voice_session_id and s.state = 'active')`;
    t.equal(open!.n, 0, 'and no reservation: refusals come before the meter');

    // Widget visitors of one assistant share its queue; their refusal is the same neutral sentence.
    const widget = await voiceAssistant(app, other, { instructions: SLOW });
    const visitors = await Promise.all(
      ['visitor-ad-0001', 'visitor-ad-0002', 'visitor-ad-0003', 'visitor-ad-0004'].map((visitorId) =>
        mintAsWidget(app, widget, { visitorId }),
      ),
    );
    const visitorStatuses = visitors.map((r) => r.status);
    const turnedAway = visitors.filter((r) => r.status === 503);
    t.ok(turnedAway.length >= 1, `visitors past the assistant's queue are refused (${tally(visitorStatuses)})`);
    t.same(
      visitorStatuses.filter((s) => s !== 200 && s !== 503),
      [],
      'visitors get 200 or 503, nothing else',
    );
    for (const r of turnedAway) {
      t.equal(r.body.code, 'SERVICE_OVERLOADED');
      t.ok(Number(r.headers.get('retry-after')) >= 1);
      t.notMatch(JSON.stringify(r.body), /plan|billing|usage|quota|minute|credit|budget/i, 'names no plan or usage');
    }
  },
);

t.test('the ingestion worker takes a job only in a free slot of the work pool, and yields it after', async (t) => {
  const db = await createTestDatabase(t);
  const owner = await createOwner(db.sql);
  const assistant = await createAssistant(db.sql, owner, { name: 'Admission worker' });
  const { meter } = createTestMeter(db.sql, { config: { HOSTED_USAGE_ENFORCEMENT: 'shadow' } });
  const admission = new Admission({ maxInFlight: 1, maxQueuedPerTenant: 4, maxWaitMs: 5000, loopDelayLimitMs: 60_000 });
  t.teardown(() => admission.close());
  const worker = createIngestionWorker({
    sql: db.sql,
    meter,
    log: captureLogger().log,
    admission,
    process: async (d) => ({ chunks: chunkText((d.source ?? Buffer.alloc(0)).toString()) }),
  });
  const doc = await addSource({ sql: db.sql, addressPolicy: publicAddressesOnly }, owner, assistant.id, {
    type: 'text',
    name: 'Doc',
    text: 'Opening hours are nine to five.',
  });
  const status = async () =>
    (await db.sql<Array<{ status: string }>>`select status from documents where id = ${doc.id}`)[0]!.status;

  const chat = await admission.acquire('account:busy');
  t.equal(await worker.runOnce(), false, 'while a request holds the only slot, the worker claims nothing');
  t.equal(await status(), 'pending', 'the document waits');
  t.equal(
    (await db.sql`select 1 from ingestion_jobs where document_id = ${doc.id} and lease_token is not null`).length,
    0,
    'its job is not claimed',
  );
  chat();
  t.equal(await worker.runOnce(), true, 'with the slot free, the job runs');
  t.equal(await status(), 'ready');
  t.match(admission.stats(), { inFlight: 0 }, 'and its slot is given back');
  t.ok(admission.tryAcquire() !== undefined, 'a request finds the slot free at once');
});

t.test(
  'document uploads past the work pool are refused 503 with Retry-After; what was admitted is stored',
  async (t) => {
    // One slot and no queue: an upload that arrives while another is stored is refused at once.
    const app = await startTestApp(t, {
      env: { ADMISSION_MAX_IN_FLIGHT: '1', ADMISSION_QUEUE_PER_TENANT: '0', API_RATE_LIMIT_PER_MINUTE: '10000' },
    });
    const owner = await createOwner(app.deps.sql);
    const assistant = await createAssistant(app.deps.sql, owner, { name: 'Uploads' });
    const text = `${'Opening hours are nine to five on weekdays. '.repeat(20_000)}\n`;
    const upload = async (i: number) => {
      const res = await fetch(
        `${app.url}/api/v1/documents/upload?assistantId=${assistant.publicId}&filename=handbook-${i}.txt`,
        { method: 'POST', headers: { ...bearer(owner.secret), 'content-type': 'text/plain' }, body: text },
      );
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
    };
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => upload(i)));
    const statuses = answers.map((a) => a.status);
    t.same(
      statuses.filter((s) => s !== 201 && s !== 503),
      [],
      `every upload is stored or refused (${tally(statuses)})`,
    );
    t.ok(statuses.includes(201), 'the admitted uploads are stored');
    const refused = answers.filter((a) => a.status === 503);
    t.ok(refused.length >= 1, `uploads past the pool are refused (${tally(statuses)})`);
    t.ok(
      refused.every((a) => Number(a.retryAfter) >= 1 && a.body.includes('SERVICE_OVERLOADED')),
      'as 503 SERVICE_OVERLOADED with Retry-After',
    );
    const [stored] = await app.deps.sql<Array<{ n: number }>>`
    select count(*)::int as n from documents where assistant_id = ${assistant.id}`;
    t.equal(stored!.n, statuses.filter((s) => s === 201).length, 'a refused upload stored nothing');
  },
);

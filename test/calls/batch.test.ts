import t from 'tap';
import { SimulatedCarrier, type Callee } from '../../sdk/src/cli/phone/carrier-rest.js';
import type { TestApp } from '../helpers/app.js';
import { createOwner, type TestOwner } from '../helpers/identity.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from '../telephony/carrier.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { api, startReceiver, startWebhookApp, type Receiver } from '../webhooks/helpers.js';

/**
 * Call batches against the simulated carrier: 20 contacts called at most maxConcurrent at a time, busy and no answer
 * tried again by the retry rule, outcomes per contact, call-batch.completed; a calling window that keeps a batch
 * from dialing, and pause, resume and cancel. Real Parley (enforce mode, pro plan), Postgres, Redis and the voice
 * simulator.
 */

const numberOf = (seq: number) => `+1555800${String(seq).padStart(4, '0')}`;
const CALLEES: Record<string, Callee> = { [numberOf(3)]: { kind: 'busy' }, [numberOf(7)]: { kind: 'no-answer' } };

let app: TestApp;
let carrier: SimulatedCarrier;
let receiver: Receiver;
let owner: TestOwner;
let body: { assistantId: string; from: string };

t.before(async () => {
  carrier = await SimulatedCarrier.start({
    accounts: { [ACCOUNT_SID]: AUTH_TOKEN },
    callee: (to) => CALLEES[to] ?? { kind: 'person' },
    listenMs: 8000,
  });
  t.teardown(() => carrier.close());
  app = await startWebhookApp(t, {
    env: {
      TWILIO_API_BASE_URL: carrier.url,
      HOSTED_USAGE_ENFORCEMENT: 'enforce',
      // The tests poll the API while calls run.
      API_RATE_LIMIT_PER_MINUTE: '100000',
      CALL_BATCH_POLL_MS: '100',
    },
  });
  receiver = await startReceiver(t);
  owner = await createOwner(app.database.sql);
  // pro: 600 minutes, 5 concurrent calls.
  await app.database.sql`update hosting_accounts set plan_code = 'pro' where account_id = ${owner.accountId}`;
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['call-batch.completed'],
  });
  if (endpoint.status !== 201) throw new Error(endpoint.text);
  const assistant = await voiceAssistant(app, owner);
  body = { assistantId: assistant.publicId, from: (await addNumber(app, owner, assistant)).phoneNumber };
});

const batchEvents = () =>
  receiver.received
    .map((r) => JSON.parse(r.body) as { type: string; data: { id: string; status: string; progress: any } })
    .filter((e) => e.type === 'call-batch.completed');

t.test('20 contacts, 3 at a time: every one called, busy and no answer tried again, outcomes counted', async (t) => {
  const contacts = Array.from({ length: 20 }, (_, seq) => ({ to: numberOf(seq), variables: { n: String(seq) } }));
  const created = await api(app.url, 'POST', '/api/v1/call-batches', owner.secret, {
    ...body,
    contacts,
    maxConcurrent: 3,
    reservedInbound: 1,
    retry: { onBusy: true, onNoAnswer: true, attempts: 2, afterMinutes: 0 },
  });
  t.equal(created.status, 201, created.text);
  t.match(created.body, { id: /^cb_[0-9a-f]{24}$/, status: 'running', total: 20, progress: { pending: 20 } });
  await waitFor(
    async () =>
      (await app.database.sql<{ status: string }[]>`select status from call_batches where id = ${created.body.id}`)[0]
        ?.status === 'completed' || undefined,
    'the batch to complete',
    90_000,
  );
  const done = (await api(app.url, 'GET', `/api/v1/call-batches/${created.body.id}`, owner.secret)).body;
  t.match(done.progress, {
    pending: 0,
    calling: 0,
    done: 20,
    byOutcome: { answered: 18, busy: 1, no_answer: 1, voicemail: 0, failed: 0 },
  });
  t.ok(carrier.maxLive <= 3, `at most 3 calls at once (saw ${carrier.maxLive})`);
  t.ok(carrier.maxLive >= 2, 'and the batch did call in parallel');
  const perNumber = new Map<string, number>();
  for (const call of carrier.calls.values()) perNumber.set(call.to, (perNumber.get(call.to) ?? 0) + 1);
  for (let seq = 0; seq < 20; seq++) {
    const expected = seq === 3 || seq === 7 ? 2 : 1;
    t.equal(perNumber.get(numberOf(seq)), expected, `${numberOf(seq)} called ${expected} time(s)`);
  }
  const calls = await api(app.url, 'GET', `/api/v1/calls?batchId=${created.body.id}&limit=100`, owner.secret);
  t.equal(calls.status, 200, calls.text);
  t.equal(calls.body.calls.length, 22, "the batch's calls are listed by batchId");
  t.ok(
    calls.body.calls.every((c: { variables: { n: string }; to: string }) => numberOf(Number(c.variables.n)) === c.to),
    "each call has its contact's variables",
  );
  const event = await waitFor(() => batchEvents().find((e) => e.data.id === created.body.id), 'call-batch.completed');
  t.equal(event!.data.status, 'completed');
});

t.test('the inbound reserve is kept: pro allows 5 calls, 3 kept for inbound, so at most 2 at once', async (t) => {
  carrier.maxLive = 0;
  const created = await api(app.url, 'POST', '/api/v1/call-batches', owner.secret, {
    ...body,
    contacts: Array.from({ length: 6 }, (_, seq) => ({ to: `+1555830${String(seq).padStart(4, '0')}` })),
    maxConcurrent: 5,
    reservedInbound: 3,
  });
  t.equal(created.status, 201, created.text);
  await waitFor(
    async () =>
      (await app.database.sql<{ status: string }[]>`select status from call_batches where id = ${created.body.id}`)[0]
        ?.status === 'completed' || undefined,
    'the batch to complete',
    90_000,
  );
  t.ok(carrier.maxLive <= 2, `at most 2 calls at once (saw ${carrier.maxLive})`);
  const done = (await api(app.url, 'GET', `/api/v1/call-batches/${created.body.id}`, owner.secret)).body;
  t.match(done.progress, { done: 6, byOutcome: { answered: 6 } });
});

t.test('outside its calling window a batch dials nobody; pause, resume and cancel', async (t) => {
  const nowMinute = new Date().getUTCHours() * 60 + new Date().getUTCMinutes();
  // A window that opens two hours from now, for an hour (UTC), every day.
  const at = (m: number) =>
    `${String(Math.floor((m % 1440) / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
  const start = (nowMinute + 120) % 1440;
  const window = {
    days: [0, 1, 2, 3, 4, 5, 6],
    start: at(start),
    end: at(Math.min(start + 60, 1439)),
    timezone: 'UTC',
  };
  const before = carrier.calls.size;
  const created = await api(app.url, 'POST', '/api/v1/call-batches', owner.secret, {
    ...body,
    contacts: [{ to: '+15558100001' }, { to: '+15558100002' }],
    maxConcurrent: 2,
    window,
  });
  t.equal(created.status, 201, created.text);
  const touched = async () =>
    (
      await app.database.sql<{ updatedAt: Date }[]>`select updated_at from call_batches where id = ${created.body.id}`
    )[0]!.updatedAt;
  const first = await touched();
  await waitFor(async () => (await touched()).getTime() > first.getTime() || undefined, 'a worker pass');
  t.equal(carrier.calls.size, before, 'nobody was called outside the window');

  const paused = await api(app.url, 'POST', `/api/v1/call-batches/${created.body.id}/pause`, owner.secret);
  t.equal(paused.body.status, 'paused');
  const again = await api(app.url, 'POST', `/api/v1/call-batches/${created.body.id}/pause`, owner.secret);
  t.equal(again.status, 409);
  t.equal(again.body.code, 'CALLS_BATCH_STATE');
  const resumed = await api(app.url, 'POST', `/api/v1/call-batches/${created.body.id}/resume`, owner.secret);
  t.equal(resumed.body.status, 'running');
  const canceled = await api(app.url, 'POST', `/api/v1/call-batches/${created.body.id}/cancel`, owner.secret);
  t.match(canceled.body, { status: 'canceled', progress: { pending: 0, done: 2, byOutcome: { canceled: 2 } } });
  const event = await waitFor(
    () => batchEvents().find((e) => e.data.id === created.body.id),
    'call-batch.completed for the canceled batch',
  );
  t.equal(event!.data.status, 'canceled');
  t.equal(carrier.calls.size, before, 'and nobody was ever called');

  const bad = await api(app.url, 'POST', '/api/v1/call-batches', owner.secret, {
    ...body,
    contacts: [{ to: 'nope' }],
    maxConcurrent: 0,
  });
  t.equal(bad.status, 400);
  t.match(bad.text, /contacts|maxConcurrent/, 'the refusal names the field');
  const other = await createOwner(app.database.sql);
  t.equal(
    (await api(app.url, 'GET', `/api/v1/call-batches/${created.body.id}`, other.secret)).status,
    404,
    "another account's batch is 404",
  );
});

import t from 'tap';
import { SimulatedCarrier, type Callee } from '../../sdk/src/cli/phone/carrier-rest.js';
import { postWebhook } from '../../sdk/src/cli/phone/carrier.js';
import { Meter, reserveVoiceSeconds, settleVoiceSeconds } from '../../src/metering/index.js';
import type { TestApp } from '../helpers/app.js';
import { createOwner, dashboardHeaders, login, type TestOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from '../telephony/carrier.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { api, startReceiver, startWebhookApp, type Receiver } from '../webhooks/helpers.js';

/**
 * Calls Parley places, against a simulated carrier (its REST side and the callee who picks up): a person who talks
 * with the assistant, an answering machine that gets the voicemail message after its beep (or is hung up on), busy
 * and no answer, a carrier refusal, cancel, forged callbacks, and the plan refusing before the carrier is asked.
 * Real Parley (enforce mode), Postgres, Redis and the voice simulator.
 */

const CALLEES: Record<string, Callee> = {
  '+15557000001': { kind: 'person' },
  '+15557000002': { kind: 'machine' },
  '+15557000003': { kind: 'busy' },
  '+15557000004': { kind: 'no-answer' },
  '+15557000005': { kind: 'invalid' },
  '+15557000006': { kind: 'no-answer', ringMs: 30_000 },
  '+15557000008': { kind: 'person', holdMs: 30_000 },
};

let app: TestApp;
let carrier: SimulatedCarrier;
let receiver: Receiver;
let owner: TestOwner;
let from: string;
let assistantId: string;

const place = (body: Record<string, unknown>, who = owner) =>
  api(app.url, 'POST', '/api/v1/calls', who.secret, { assistantId, from, ...body });
const get = (id: string, who = owner) => api(app.url, 'GET', `/api/v1/calls/${id}`, who.secret);
const settled = (id: string, what: string) =>
  waitFor(
    async () => {
      const res = await get(id);
      return ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(res.body?.status) ? res.body : undefined;
    },
    what,
    20_000,
  );
const simulated = (to: string) => [...carrier.calls.values()].filter((c) => c.to === to);

t.before(async () => {
  carrier = await SimulatedCarrier.start({
    accounts: { [ACCOUNT_SID]: AUTH_TOKEN },
    callee: (to) => CALLEES[to] ?? { kind: 'person' },
    listenMs: 8000,
  });
  t.teardown(() => carrier.close());
  app = await startWebhookApp(t, {
    // The tests poll the API while calls run: no rate limit in the way.
    env: { TWILIO_API_BASE_URL: carrier.url, HOSTED_USAGE_ENFORCEMENT: 'enforce', API_RATE_LIMIT_PER_MINUTE: '100000' },
  });
  receiver = await startReceiver(t);
  owner = await createOwner(app.database.sql);
  await app.database.sql`update hosting_accounts set plan_code = 'pro' where account_id = ${owner.accountId}`;
  const endpoint = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['call.status_changed'],
  });
  if (endpoint.status !== 201) throw new Error(endpoint.text);
  const assistant = await voiceAssistant(app, owner);
  assistantId = assistant.publicId;
  from = (await addNumber(app, owner, assistant)).phoneNumber;
});

t.test('a person answers: the assistant talks with them, and the call lands as a phone conversation', async (t) => {
  const res = await place({ to: '+15557000001', metadata: { crm: 'lead-1' }, variables: { name: 'Ada' } });
  t.equal(res.status, 201, res.text);
  t.match(res.body, { id: /^call_[0-9a-f]{24}$/, status: 'queued', to: '+15557000001', from, outcome: null });
  const call = await settled(res.body.id, 'the call to end');
  t.match(call, { status: 'completed', outcome: 'answered', metadata: { crm: 'lead-1' }, variables: { name: 'Ada' } });
  t.ok(call.sessionId, 'the voice session is on the call');
  t.ok(call.conversationId, 'and its conversation');
  t.ok(call.answeredAt && call.endedAt, 'with when it was answered and ended');
  const [sim] = simulated('+15557000001');
  t.ok(sim!.heardBytes > 0, `the callee heard the assistant (${sim!.heardBytes} bytes)`);
  t.same(sim!.statuses, ['initiated', 'ringing', 'in-progress', 'completed']);
  t.equal(sim!.endedBy, 'callee');
  const detail = await waitFor(async () => {
    const d = await api(app.url, 'GET', `/api/v1/conversations/${call.conversationId}`, owner.secret);
    return d.body?.messages?.some((m: { role: string }) => m.role === 'assistant') ? d.body : undefined;
  }, 'the transcript');
  t.equal(detail.conversation.source, 'phone');
  t.ok(
    detail.messages.some((m: { role: string }) => m.role === 'user'),
    'what the callee said is in it',
  );
  const hooks = await waitFor(() => {
    const mine = receiver.received
      .map((r) => JSON.parse(r.body) as { type: string; data: { id: string; status: string } })
      .filter((e) => e.type === 'call.status_changed' && e.data.id === call.id);
    return mine.some((e) => e.data.status === 'completed') ? mine : undefined;
  }, 'the completed webhook');
  t.same(
    hooks!.map((e) => e.data.status),
    ['queued', 'ringing', 'in_progress', 'completed'],
    'call.status_changed follows the call',
  );
});

t.test('a live call is transferred cold to a person: the carrier dials them and the assistant leaves', async (t) => {
  const res = await place({ to: '+15557000008' });
  t.equal(res.status, 201, res.text);
  const early = await api(app.url, 'POST', `/api/v1/calls/${res.body.id}/transfer`, owner.secret, {
    to: '+15557009999',
  });
  if (early.status !== 200) {
    t.equal(early.status, 409, 'a call not yet answered cannot be transferred');
    t.equal(early.body.code, 'CALLS_NOT_LIVE');
  }
  const live = await waitFor(async () => {
    const c = await get(res.body.id);
    return c.body.status === 'in_progress' && c.body.sessionId !== null ? c.body : undefined;
  }, 'the call to be answered');
  await waitFor(() => (simulated('+15557000008')[0]?.heardBytes ?? 0) > 0 || undefined, 'the assistant to talk');
  const warm = await api(app.url, 'POST', `/api/v1/calls/${res.body.id}/transfer`, owner.secret, {
    to: '+15557009999',
    mode: 'warm',
  });
  t.equal(warm.status, 400, 'a warm transfer is not offered (yet)');
  const moved = await api(app.url, 'POST', `/api/v1/calls/${res.body.id}/transfer`, owner.secret, {
    to: '+15557009999',
  });
  t.equal(moved.status, 200, moved.text);
  t.match(moved.body.transfer, { to: '+15557009999', mode: 'cold' });
  const [sim] = simulated('+15557000008');
  t.equal(sim!.transferredTo, '+15557009999', 'the carrier was told to dial the person');
  await waitFor(async () => {
    const [row] = await app.database.sql<{ state: string }[]>`
      select state from voice_sessions where id = ${live.sessionId}`;
    return row?.state === 'ended' || undefined;
  }, "the assistant's part of the call to end");
  t.match(await settled(res.body.id, 'the call to end'), { status: 'completed', outcome: 'answered' });

  // Cancel on a live call hangs it up: it ends completed (it was answered), the carrier ended it.
  const second = await place({ to: '+15557000008' });
  await waitFor(async () => (await get(second.body.id)).body.status === 'in_progress' || undefined, 'an answer');
  const hung = await api(app.url, 'POST', `/api/v1/calls/${second.body.id}/cancel`, owner.secret);
  t.equal(hung.status, 200, hung.text);
  t.match(await settled(second.body.id, 'the live call to be hung up'), { status: 'completed', outcome: 'answered' });
  t.equal(simulated('+15557000008')[1]?.endedBy, 'parley', 'Parley hung up');
});

t.test('busy and no answer end the call with that outcome, no conversation', async (t) => {
  const busy = await place({ to: '+15557000003' });
  const none = await place({ to: '+15557000004' });
  t.equal(busy.status, 201);
  t.equal(none.status, 201);
  t.match(await settled(busy.body.id, 'busy'), { status: 'busy', outcome: 'busy', conversationId: null });
  t.match(await settled(none.body.id, 'no answer'), { status: 'no_answer', outcome: 'no_answer', sessionId: null });
  const listed = await api(app.url, 'GET', '/api/v1/calls?status=busy', owner.secret);
  t.same(
    listed.body.calls.map((c: { id: string }) => c.id),
    [busy.body.id],
    'the list filters by status',
  );
});

t.test('a machine answers: the message is left after the beep, or the call hangs up', async (t) => {
  const message = 'Hi, this is Parley calling about your order. Please call us back.';
  const left = await place({ to: '+15557000002', voicemail: { message } });
  t.equal(left.status, 201, left.text);
  const call = await settled(left.body.id, 'the voicemail call to end');
  t.match(call, { status: 'completed', answeredBy: 'machine', outcome: 'voicemail', voicemail: { message } });
  const [sim] = simulated('+15557000002');
  t.equal(sim!.voicemail, message, 'the machine recorded the message');
  t.equal(sim!.endedBy, 'parley', 'Parley hung up after it');

  const hung = await place({ to: '+15557000002', voicemail: 'hangup' });
  const after = await settled(hung.body.id, 'the hang-up call to end');
  t.match(after, { answeredBy: 'machine', outcome: 'voicemail' });
  const second = simulated('+15557000002').find((c) => c.voicemail === undefined);
  t.equal(second?.endedBy, 'parley', 'Parley hung up on the machine without a message');
});

t.test('refusals: bad input names its field, a foreign number, the carrier refusing, forged callbacks', async (t) => {
  const bad = await place({ to: '555-0100' });
  t.equal(bad.status, 400);
  t.match(bad.text, /"to"|\bto\b/, 'the refusal names the field');
  const notMine = await place({ to: '+15557000001', from: '+15550009999' });
  t.equal(notMine.status, 400);
  t.equal(notMine.body.code, 'CALLS_FROM_NOT_REGISTERED');
  const refused = await place({ to: '+15557000005' });
  t.equal(refused.status, 422, refused.text);
  t.equal(refused.body.code, 'CALLS_CARRIER_REFUSED');
  const failed = (await api(app.url, 'GET', '/api/v1/calls?status=failed', owner.secret)).body.calls;
  t.equal(failed.length, 1, 'the refused call is listed as failed');
  t.match(failed[0].failure, /not a valid phone number/);

  const other = await createOwner(app.database.sql);
  const ringing = await place({ to: '+15557000006' });
  t.equal((await get(ringing.body.id, other)).status, 404, "another account's call is 404");
  const statusUrl = `${app.url}/api/v1/telephony/twilio/calls/${ringing.body.id}/status`;
  const form = { AccountSid: ACCOUNT_SID, CallSid: 'CA' + '0'.repeat(32), CallStatus: 'completed' };
  const forged = await postWebhook(statusUrl, form, 'not-the-carrier-token-at-all');
  t.equal(forged.status, 403, 'a callback signed with another token is refused');
  const unsigned = await postWebhook(statusUrl, form, AUTH_TOKEN, { signature: null });
  t.equal(unsigned.status, 403, 'an unsigned one too');
  t.equal((await get(ringing.body.id)).body.status, 'ringing', 'and the call did not move');

  const canceled = await api(app.url, 'POST', `/api/v1/calls/${ringing.body.id}/cancel`, owner.secret);
  t.equal(canceled.status, 200, canceled.text);
  t.match(canceled.body, { status: 'canceled', outcome: 'canceled' });
  await waitFor(() => simulated('+15557000006')[0]?.endedBy, 'the carrier to stop ringing');
  t.equal(simulated('+15557000006')[0]!.endedBy, 'parley');
  const again = await api(app.url, 'POST', `/api/v1/calls/${ringing.body.id}/cancel`, owner.secret);
  t.equal(again.status, 409);
  t.equal(again.body.code, 'CALLS_ALREADY_ENDED');
});

t.test('the plan refuses before the carrier is asked: concurrent calls, then voice minutes', async (t) => {
  const free = await createOwner(app.database.sql); // free plan: 1 concurrent call, 10 minutes
  const assistant = await voiceAssistant(app, free);
  const number = (await addNumber(app, free, assistant)).phoneNumber;
  const body = { assistantId: assistant.publicId, from: number };
  const first = await api(app.url, 'POST', '/api/v1/calls', free.secret, { ...body, to: '+15557000006' });
  t.equal(first.status, 201, first.text);
  const asked = carrier.calls.size;
  const second = await api(app.url, 'POST', '/api/v1/calls', free.secret, { ...body, to: '+15557000001' });
  t.equal(second.status, 429, 'a second call while one rings is over the concurrent calls');
  t.equal(carrier.calls.size, asked, 'the carrier was not asked');
  await api(app.url, 'POST', `/api/v1/calls/${first.body.id}/cancel`, free.secret);

  const meter = new Meter({ sql: app.database.sql, config: app.config, log: captureLogger().log });
  for (let n = 0; n < 2; n++) {
    const grant = await reserveVoiceSeconds(meter, {
      accountId: free.accountId,
      sessionId: `vs_earlier${n}`,
      source: 'api',
      audience: 'owner',
      first: false,
      requestedSeconds: 300,
    });
    await settleVoiceSeconds(meter, grant, grant.seconds);
  }
  const spent = await api(app.url, 'POST', '/api/v1/calls', free.secret, { ...body, to: '+15557000001' });
  t.equal(spent.status, 402, 'with the minutes used up the call is refused');
  t.equal(carrier.calls.size, asked, 'and the carrier was not asked');
  const listed = await api(app.url, 'GET', '/api/v1/calls', free.secret);
  t.equal(listed.body.calls.length, 1, 'no call was stored for the refusals');
});

t.test('a used-up budget refuses before the carrier is asked', async (t) => {
  const capped = await createOwner(app.database.sql);
  await app.database.sql`update hosting_accounts set plan_code = 'pro' where account_id = ${capped.accountId}`;
  const assistant = await voiceAssistant(app, capped);
  const number = (await addNumber(app, capped, assistant)).phoneNumber;
  // The owner caps the period at nothing in the dashboard: the budget is used up.
  const budget = await fetch(`${app.url}/api/v1/account/budget`, {
    method: 'PUT',
    headers: dashboardHeaders(app.url, await login(app.url, capped.email, capped.password)),
    body: JSON.stringify({ hardLimitMicros: 0 }),
  });
  t.equal(budget.status, 200, await budget.text());
  const asked = carrier.calls.size;
  const refused = await api(app.url, 'POST', '/api/v1/calls', capped.secret, {
    assistantId: assistant.publicId,
    from: number,
    to: '+15557000001',
  });
  t.match(refused, { status: 402, body: { code: 'USAGE_LIMIT_REACHED' } }, 'the budget refuses the call');
  t.equal(carrier.calls.size, asked, 'and the carrier was not asked');
  const listed = await api(app.url, 'GET', '/api/v1/calls', capped.secret);
  t.equal(listed.body.calls.length, 0, 'no call was stored');
});

import t from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login, type TestOwner } from '../helpers/identity.js';
import { live, post, voiceAssistant, waitFor } from '../voice/helpers.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  addNumber,
  callParams,
  callWebhook,
  mulawSilence,
  mulawSpeech,
  openCarrierStream,
  streamOfTwiml,
} from './carrier.js';

/**
 * Phone calls as an owner and a carrier see them: numbers added, listed and removed over the API (the auth token never
 * comes back), the signed call webhook (a bad signature starts nothing), and a spoken call through the carrier's media
 * stream that lands in the conversations as a phone call. Real Parley, Postgres, Redis and the voice simulator.
 */

let app: TestApp;
let owner: TestOwner;
let other: TestOwner;
/** Every response body this test saw: the auth token must be in none of them. */
const seen: string[] = [];

async function get(path: string, who: TestOwner): Promise<{ status: number; body: any }> {
  const res = await fetch(`${app.url}${path}`, { headers: bearer(who.secret) });
  const text = await res.text();
  seen.push(text);
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function del(path: string, who: TestOwner): Promise<{ status: number; body: any }> {
  const res = await fetch(`${app.url}${path}`, { method: 'DELETE', headers: bearer(who.secret) });
  const text = await res.text();
  seen.push(text);
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

async function create(body: Record<string, unknown>, who = owner) {
  const res = await post(app.url, '/api/v1/phone-numbers', body, bearer(who.secret));
  seen.push(JSON.stringify(res.body));
  return res;
}

const callRows = async () =>
  (await app.database.sql<{ n: number }[]>`select count(*)::int as n from voice_sessions`)[0]!.n;

t.before(async () => {
  app = await startTestApp(t);
  owner = await createOwner(app.database.sql);
  other = await createOwner(app.database.sql);
});

t.test('numbers: add, list, get, delete; the same number twice is 409; a bad number names its field', async (t) => {
  const assistant = await voiceAssistant(app, owner);
  const body = {
    phoneNumber: '+15550142001',
    assistantId: assistant.publicId,
    provider: 'twilio',
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
  };
  const created = await create(body);
  t.equal(created.status, 201);
  t.match(created.body, {
    id: /^pn_[0-9a-f]{24}$/,
    phoneNumber: '+15550142001',
    provider: 'twilio',
    voiceUrl: /\/api\/v1\/telephony\/twilio\/voice$/,
  });
  t.notOk('authToken' in created.body, 'the auth token is not answered');
  t.notOk(JSON.stringify(created.body).includes(AUTH_TOKEN), 'nor anywhere in the answer');

  const again = await create(body);
  t.equal(again.status, 409, 'the same number again is refused');
  t.equal(again.body.code, 'TELEPHONY_NUMBER_TAKEN');

  const bad = await create({ ...body, phoneNumber: '555-0100' });
  t.equal(bad.status, 400, 'a number that is not E.164 is refused');
  t.ok(JSON.stringify(bad.body).includes('phoneNumber'), 'the refusal names the field');

  const list = await get('/api/v1/phone-numbers', owner);
  t.equal(list.status, 200);
  t.same(
    list.body.phoneNumbers.map((n: { id: string }) => n.id),
    [created.body.id],
  );
  const one = await get(`/api/v1/phone-numbers/${created.body.id}`, owner);
  t.equal(one.status, 200);
  t.equal(one.body.phoneNumber, '+15550142001');

  t.equal((await get(`/api/v1/phone-numbers/${created.body.id}`, other)).status, 404, "another account's: 404");
  t.equal((await del(`/api/v1/phone-numbers/${created.body.id}`, other)).status, 404, 'nor can it delete it');
  t.same((await get('/api/v1/phone-numbers', other)).body.phoneNumbers, [], 'nor list it');

  t.equal((await del(`/api/v1/phone-numbers/${created.body.id}`, owner)).status, 200, 'the owner deletes it');
  t.equal((await get(`/api/v1/phone-numbers/${created.body.id}`, owner)).status, 404, 'then it is gone');
  const readded = await create(body);
  t.equal(readded.status, 201, 'and the number can be added again');
});

t.test('the webhook: a wrong or missing signature, or an unknown AccountSid, is 403 and starts nothing', async (t) => {
  const assistant = await voiceAssistant(app, owner);
  const number = await addNumber(app, owner, assistant);
  const before = await callRows();
  const params = callParams(number.phoneNumber);
  const missing = await callWebhook(app, params, { signature: null });
  const wrong = await callWebhook(app, params, { authToken: 'not-the-carrier-token-at-all' });
  const unknown = await callWebhook(app, { ...params, AccountSid: 'AC' + 'f'.repeat(32) });
  for (const [what, res] of [
    ['missing signature', missing],
    ['wrong signature', wrong],
    ['unknown AccountSid', unknown],
  ] as const) {
    seen.push(res.text);
    t.equal(res.status, 403, `${what}: 403`);
    t.match(res.text, /TELEPHONY_SIGNATURE_INVALID/, `${what}: the stable code`);
  }
  t.equal(await callRows(), before, 'no call was started');

  const unregistered = await callWebhook(app, callParams('+15550199999'));
  seen.push(unregistered.text);
  t.equal(unregistered.status, 200);
  t.match(unregistered.text, /<Reject\/>/, 'a signed call to a number nobody registered is rejected');
});

t.test('a refusal says nothing of plans, billing or usage', async (t) => {
  const off = await voiceAssistant(app, owner, { voice: { enabled: false } });
  const number = await addNumber(app, owner, off);
  const res = await callWebhook(app, callParams(number.phoneNumber));
  seen.push(res.text);
  t.equal(res.status, 200, 'the carrier gets TwiML, not an error it would read out');
  t.match(res.text, /<Say>[^<]+<\/Say><Hangup\/>/);
  t.notMatch(res.text, /plan|billing|bill|usage|quota|limit|minute|upgrade|subscription|credit/i);
});

t.test('a signed call: TwiML connects the stream; the spoken call lands in the conversations', async (t) => {
  const assistant = await voiceAssistant(app, owner);
  const number = await addNumber(app, owner, assistant);
  const answer = await callWebhook(app, callParams(number.phoneNumber, '+15550100777'));
  seen.push(answer.text);
  t.equal(answer.status, 200);
  t.match(answer.text, /<Connect><Stream url="wss?:\/\/[^"]+\/phone-stream">/, 'the TwiML opens a media stream');
  const stream = streamOfTwiml(answer.text)!;
  t.ok(stream, 'with the call token as a stream parameter');

  const carrier = await openCarrierStream(stream.url, stream.token);
  for (const frame of mulawSpeech(40)) carrier.media(frame);
  for (const frame of mulawSilence(40)) carrier.media(frame);
  await waitFor(() => (carrier.heardBytes() > 0 ? true : undefined), 'the assistant to answer on the phone');
  // A mark follows every 100 ms of audio, or the end of a burst 100 ms after it.
  await waitFor(() => (carrier.messages.some((m) => m.event === 'mark') ? true : undefined), 'a mark after the audio');
  t.pass('the audio came with marks');
  // The timeline notes a mark once the carrier has played everything sent so far (at most one a second).
  await waitFor(
    () => live(app, stream.sessionId).timeline.has('mark') || undefined,
    'the carrier to have played all the audio sent so far',
  );
  // A keypad press, then the caller hangs up: the carrier says stop.
  carrier.send({
    event: 'dtmf',
    streamSid: carrier.messages[0]?.streamSid,
    dtmf: { track: 'inbound_track', digit: '7' },
  });
  await waitFor(
    () => live(app, stream.sessionId).timeline.has('dtmf') || undefined,
    'the keypad press to reach the call',
  );
  // The caller hangs up: the carrier says stop.
  carrier.send({ event: 'stop', streamSid: carrier.messages[0]?.streamSid, stop: {} });
  await carrier.closed;

  const row = (await waitFor(async () => {
    const [r] = await app.database.sql<{ state: string; conversationId: string }[]>`
      select state, conversation_id from voice_sessions where id = ${stream.sessionId}`;
    return r?.state === 'ended' ? r : undefined;
  }, 'the call to be settled'))!;
  const detail = (await waitFor(async () => {
    const d = await get(`/api/v1/conversations/${row.conversationId}`, owner);
    return d.body?.messages?.some((m: { role: string }) => m.role === 'assistant') ? d : undefined;
  }, 'the transcript'))!;
  t.equal(detail.body.conversation.source, 'phone', 'the conversation is a phone call');
  t.equal(detail.body.conversation.visitorLabel, 'Phone caller');
  t.ok(
    detail.body.messages.some((m: { role: string }) => m.role === 'user'),
    'what the caller said is in it',
  );
  const [call] = detail.body.voiceCalls;
  t.match(call, { sessionId: stream.sessionId, source: 'phone', state: 'ended', endReason: null });
  t.ok(call.billableSeconds >= 1, `billed ${call.billableSeconds} s while the caller was on the line`);
  t.notOk(JSON.stringify(detail.body).includes('+15550100777'), "the caller's full number is not shown");
  t.equal(detail.body.conversation.callerNumber, '+1 555 ••• 0777', 'the caller number is shown masked');
  const listed = await get(`/api/v1/conversations?assistantId=${assistant.publicId}`, owner);
  t.same(
    listed.body.conversations.map((c: { source: string; callerNumber: string | null }) => [c.source, c.callerNumber]),
    [['phone', '+1 555 ••• 0777']],
    'and masked in the list',
  );
  t.notOk(JSON.stringify(listed.body).includes('0100777'), 'the list never has the full number');
  const [stored] = await app.database.sql<{ callerNumber: string }[]>`
    select caller_number from conversations where id = ${row.conversationId}`;
  t.equal(stored!.callerNumber, '+15550100777', 'the whole number is stored with the conversation');
  const usage = await waitFor(async () => {
    const res = await fetch(`${app.url}/api/v1/account/usage/daily`, {
      headers: dashboardHeaders(app.url, await login(app.url, owner.email, owner.password)),
    });
    const body = (await res.json()) as { days: { bySource: { source: string; costMicros: number }[] }[] };
    return body.days.flatMap((d) => d.bySource).find((s) => s.source === 'phone');
  }, 'the call in the usage by source');
  t.ok(usage!.costMicros > 0, `usage shows the phone source (${usage!.costMicros} micro-dollars)`);

  const timeline = await waitFor(async () => {
    const tl = await get(`/api/v1/voice/sessions/${stream.sessionId}/timeline`, owner);
    return tl.body?.events?.some((e: { type: string }) => e.type === 'settled') ? tl.body : undefined;
  }, 'the settled timeline');
  t.equal(timeline.transport, 'phone', 'the timeline says the call came by phone');
  const types = timeline.events.map((e: { type: string }) => e.type);
  for (const type of ['dtmf', 'mark', 'stop'])
    t.ok(types.includes(type), `the phone stream's ${type} is on the timeline`);
  t.notOk(JSON.stringify(timeline).includes('"7"'), 'the digit itself is not (it is in the transcript)');

  const others = await get(`/api/v1/conversations/${row.conversationId}`, other);
  t.equal(others.status, 404, "another account cannot read the call's conversation");
});

t.test('the auth token never appears in an answer or a log line', async (t) => {
  t.ok(seen.length > 10, `${seen.length} answers looked at`);
  t.notOk(
    seen.some((text) => text.includes(AUTH_TOKEN)),
    'in no answer',
  );
  t.notOk(app.logs.text().includes(AUTH_TOKEN), 'in no log line');
});

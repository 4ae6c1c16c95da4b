import t from 'tap';
import { SimulatedCarrier } from '../../sdk/src/cli/phone/carrier-rest.js';
import type { TestApp } from '../helpers/app.js';
import { createOwner, type TestOwner } from '../helpers/identity.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from '../telephony/carrier.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { api, startWebhookApp } from '../webhooks/helpers.js';

/**
 * The assistant on a call Parley placed, through the simulated carrier and the voice simulator: the first message
 * says the call's variables, and the built-in transfer_call hands the call to a person as the API's transfer does.
 */

const GREETED = '+15557100001';

let app: TestApp;
let carrier: SimulatedCarrier;
let owner: TestOwner;
let from: string;

const get = (id: string) => api(app.url, 'GET', `/api/v1/calls/${id}`, owner.secret);
const settled = (id: string, what: string) =>
  waitFor(
    async () => {
      const res = await get(id);
      return ['completed', 'busy', 'no_answer', 'failed', 'canceled'].includes(res.body?.status) ? res.body : undefined;
    },
    what,
    20_000,
  );

t.before(async () => {
  carrier = await SimulatedCarrier.start({
    accounts: { [ACCOUNT_SID]: AUTH_TOKEN },
    // The greeted callee listens without a word (nothing cuts the greeting short); the others talk.
    callee: (to) =>
      to === GREETED ? { kind: 'person', speechFrames: 0, holdMs: 3000 } : { kind: 'person', holdMs: 8000 },
    listenMs: 8000,
  });
  t.teardown(() => carrier.close());
  app = await startWebhookApp(t, {
    env: { TWILIO_API_BASE_URL: carrier.url, HOSTED_USAGE_ENFORCEMENT: 'enforce', API_RATE_LIMIT_PER_MINUTE: '100000' },
  });
  owner = await createOwner(app.database.sql);
  await app.database.sql`update hosting_accounts set plan_code = 'pro' where account_id = ${owner.accountId}`;
  from = (await addNumber(app, owner, await voiceAssistant(app, owner))).phoneNumber;
});

t.test("the first message says the call's variables; an unknown one is left out", async (t) => {
  const assistant = await voiceAssistant(app, owner, {
    voice: { firstMessage: 'Hello {{name}}{{ surname }}, welcome' },
  });
  const res = await api(app.url, 'POST', '/api/v1/calls', owner.secret, {
    assistantId: assistant.publicId,
    from,
    to: GREETED,
    variables: { name: 'Ada' },
  });
  t.equal(res.status, 201, res.text);
  const call = await settled(res.body.id, 'the call to end');
  t.equal(call.outcome, 'answered');
  const said = await waitFor(async () => {
    const d = await api(app.url, 'GET', `/api/v1/conversations/${call.conversationId}`, owner.secret);
    const first = d.body?.messages?.find((m: { role: string }) => m.role === 'assistant');
    return first?.content as string | undefined;
  }, "the assistant's first words");
  t.match(said, /^Hello Ada, welcome/, 'the callee is greeted by name');
});

t.test('transfer_call: the carrier dials the person, the call ends transferred, the tool says so', async (t) => {
  const assistant = await voiceAssistant(app, owner, {
    instructions: 'Hand the caller to sales. [sim:tool=transfer_call{"to":"+15550001111"}]',
    settings: { builtins: ['transfer_call'] },
  });
  const res = await api(app.url, 'POST', '/api/v1/calls', owner.secret, {
    assistantId: assistant.publicId,
    from,
    to: '+15557100002',
  });
  t.equal(res.status, 201, res.text);
  const call = await settled(res.body.id, 'the transferred call to end');
  t.match(call, { status: 'completed', outcome: 'answered', transfer: { to: '+15550001111', mode: 'cold' } });
  const sim = [...carrier.calls.values()].find((c) => c.to === '+15557100002');
  t.equal(sim?.transferredTo, '+15550001111', 'the carrier was told to <Dial> the person');
  t.equal(sim?.endedBy, 'parley', 'the redirect ended the stream, not the callee');
  const timeline = (await waitFor(async () => {
    const r = await api(app.url, 'GET', `/api/v1/voice/sessions/${call.sessionId}/timeline`, owner.secret);
    return r.body?.end == null ? undefined : r;
  }, 'the settled session'))!;
  t.match(timeline.body.end, { reason: 'transferred', fault: null }, "the assistant's part ended transferred");
  const tools = await waitFor(async () => {
    const d = await api(app.url, 'GET', `/api/v1/conversations/${call.conversationId}`, owner.secret);
    return d.body?.toolCalls?.length > 0 ? d.body.toolCalls : undefined;
  }, 'the tool call in the conversation');
  t.match(tools, [
    {
      name: 'transfer_call',
      arguments: { to: '+15550001111' },
      status: 'succeeded',
      result: /transferred to \+15550001111/,
    },
  ]);
});

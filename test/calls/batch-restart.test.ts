import t from 'tap';
import { SimulatedCarrier, type Callee } from '../../sdk/src/cli/phone/carrier-rest.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { ACCOUNT_SID, AUTH_TOKEN, addNumber } from '../telephony/carrier.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { api } from '../webhooks/helpers.js';

/**
 * A batch worked by two instances of one deployment, one of which stops while its calls are on the line: every
 * contact is called exactly once (a contact's claim and its call's row commit together; a locked batch is skipped by
 * the other instance). The simulated carrier stands for a load balancer: callbacks stay signed over the first
 * instance's URL and are sent to the instance still running.
 */

const numberOf = (seq: number) => `+1555820${String(seq).padStart(4, '0')}`;

t.test('8 contacts, two instances, one stops mid-batch: each contact called once', async (t) => {
  let live: TestApp | undefined;
  let first: TestApp | undefined;
  const carrier = await SimulatedCarrier.start({
    accounts: { [ACCOUNT_SID]: AUTH_TOKEN },
    // The first three stay on the line until their instance goes away; the rest hang up once answered.
    callee: (to): Callee => ({ kind: 'person', ...(to <= numberOf(2) ? { holdMs: 60_000 } : {}) }),
    listenMs: 8000,
    route: (url) => (live !== undefined && first !== undefined ? url.replace(first.url, live.url) : url),
  });
  t.teardown(() => carrier.close());
  const env = { TWILIO_API_BASE_URL: carrier.url, CALL_BATCH_POLL_MS: '100' };
  first = await startTestApp(t, { env });
  const owner = await createOwner(first.database.sql);
  const assistant = await voiceAssistant(first, owner);
  const from = (await addNumber(first, owner, assistant)).phoneNumber;
  const created = await api(first.url, 'POST', '/api/v1/call-batches', owner.secret, {
    assistantId: assistant.publicId,
    from,
    contacts: Array.from({ length: 8 }, (_, seq) => ({ to: numberOf(seq) })),
    maxConcurrent: 3,
  });
  t.equal(created.status, 201, created.text);
  await waitFor(
    () => [...carrier.calls.values()].filter((c) => c.statuses.includes('in-progress')).length >= 3 || undefined,
    'three calls on the line',
    20_000,
  );
  const second = await startTestApp(t, { env, database: first.database, redisPrefix: first.redisPrefix });
  live = second;
  await first.stop();
  await waitFor(
    async () =>
      (
        await second.database.sql<{ status: string }[]>`select status from call_batches where id = ${created.body.id}`
      )[0]?.status === 'completed' || undefined,
    'the batch to complete on the instance left',
    60_000,
  );
  const perNumber = new Map<string, number>();
  for (const call of carrier.calls.values()) perNumber.set(call.to, (perNumber.get(call.to) ?? 0) + 1);
  t.same(
    [...perNumber.entries()].sort(),
    Array.from({ length: 8 }, (_, seq) => [numberOf(seq), 1]),
    'every contact was called exactly once',
  );
  const batch = await api(second.url, 'GET', `/api/v1/call-batches/${created.body.id}`, owner.secret);
  t.match(batch.body.progress, { pending: 0, calling: 0, done: 8, byOutcome: { answered: 8 } });
});

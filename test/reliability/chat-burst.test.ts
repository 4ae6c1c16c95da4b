import t from 'tap';
import { Admission } from '../../src/admission/index.js';
import { AppError } from '../../src/errors/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';

/**
 * A burst from one key within its rate limit, on an idle instance, is served: the per-tenant queue is bounded by the
 * wait it means, not by a count of requests. Only the default admission settings here, but the wait bound, which a
 * machine shared with other test files could pass for no fault of the queue.
 */
t.test('30 concurrent chats from one key are all answered', async (t) => {
  const app = await startTestApp(t, { env: { ADMISSION_QUEUE_WAIT_MS: '30000' } });
  const owner = await createOwner(app.deps.sql);
  const created = await fetch(`${app.url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Burst' }),
  });
  const { assistant } = (await created.json()) as { assistant: { publicId: string } };
  const chat = async () => {
    const res = await fetch(`${app.url}/api/v1/chat`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId: assistant.publicId, message: 'What are your opening hours?' }),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, body: await res.text() };
  };
  const answers = await Promise.all(Array.from({ length: 30 }, chat));
  const refused = answers.filter((a) => a.status !== 200);
  t.same(
    refused.map((a) => `${a.status} ${a.body.slice(0, 120)}`),
    [],
    'every chat of the burst is answered',
  );
});

t.test('a request whose expected wait passes the bound is refused at once, Retry-After that wait', async (t) => {
  const admission = new Admission({
    maxInFlight: 1,
    maxQueuedPerTenant: 1000,
    maxWaitMs: 1000,
    loopDelayLimitMs: 60_000,
  });
  t.teardown(() => admission.close());
  // One request that held its slot ~400 ms teaches the pool its service time.
  const first = await admission.acquire('a');
  const heldFrom = Date.now();
  await new Promise<void>((resolve) => {
    const check = () => (Date.now() - heldFrom >= 400 ? resolve() : setTimeout(check, 20));
    check();
  });
  first();
  t.ok(admission.stats().serviceMs! >= 400, 'the pool knows its service time');

  const running = await admission.acquire('a');
  const waiting = [admission.acquire('a'), admission.acquire('a')]; // expected 400 and 800 ms: under the bound
  const refusedAt = Date.now();
  const refusal = await admission.acquire('a').then(
    () => undefined,
    (err: unknown) => err as AppError,
  );
  t.ok(Date.now() - refusedAt < 500, 'refused without waiting');
  t.equal(refusal?.code, 'SERVICE_OVERLOADED');
  t.ok(
    Number(refusal?.headers?.['retry-after']) >= 2,
    `Retry-After is the expected wait (${refusal?.headers?.['retry-after']} s)`,
  );
  t.match(admission.stats(), { queued: 2 }, 'the requests within the bound still wait');
  running();
  (await waiting[0]!)();
  (await waiting[1]!)();
  t.match(admission.stats(), { inFlight: 0, queued: 0 });
});

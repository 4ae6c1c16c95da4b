import t from 'tap';
import { Admission } from '../../src/admission/index.js';
import { AppError } from '../../src/errors/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err as AppError,
  );

t.test('admission: bounded per-tenant queues, served in turn, refused 503 with Retry-After', async (t) => {
  const admission = new Admission({ maxInFlight: 2, maxQueuedPerTenant: 2, maxWaitMs: 5000, loopDelayLimitMs: 10_000 });
  t.teardown(() => admission.close());
  const order: string[] = [];
  const a1 = await admission.acquire('a');
  await admission.acquire('a');
  const queuedA = [admission.acquire('a'), admission.acquire('a')].map((p, i) =>
    p.then((release) => (order.push(`a${i + 3}`), release)),
  );
  const full = await refusal(admission.acquire('a'));
  t.ok(full instanceof AppError, "a tenant's full queue is refused at once");
  t.equal(full?.status, 503);
  t.equal(full?.code, 'SERVICE_OVERLOADED');
  t.equal(full?.headers?.['retry-after'], '1');
  t.notMatch(full?.message ?? '', /plan|billing|usage|quota/i, 'the refusal names no plan or usage');
  const b = admission.acquire('b').then((release) => (order.push('b1'), release));
  t.match(admission.stats(), { inFlight: 2, queued: 3 }, 'the other tenant waits in a queue of its own');

  a1();
  await new Promise((r) => setImmediate(r));
  (await queuedA[0]!)();
  (await b)();
  (await queuedA[1]!)();
  t.same(order, ['a3', 'b1', 'a4'], "tenants are served in turn: b does not wait behind all of a's queue");

  const short = new Admission({ maxInFlight: 1, maxQueuedPerTenant: 5, maxWaitMs: 50, loopDelayLimitMs: 10_000 });
  t.teardown(() => short.close());
  await short.acquire('x');
  const late = await refusal(short.acquire('y'));
  t.equal(late?.status, 503, 'a request that waited too long is refused');
  t.match(short.stats(), { queued: 0, refused: 1 });
});

t.test('a burst of chats from one tenant: no 500, refusals carry Retry-After, nothing stays reserved', async (t) => {
  const app = await startTestApp(t, {
    env: {
      ADMISSION_MAX_IN_FLIGHT: '2',
      ADMISSION_QUEUE_PER_TENANT: '4',
      ADMISSION_QUEUE_WAIT_MS: '3000',
      HOSTED_USAGE_ENFORCEMENT: 'enforce',
      HOSTED_USAGE_DEFAULT_LIMIT_MICROS: '100000000',
      API_RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
  const flooder = await createOwner(app.deps.sql);
  const reader = await createOwner(app.deps.sql);
  const created = await fetch(`${app.url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...bearer(flooder.secret), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Busy' }),
  });
  const { assistant } = (await created.json()) as { assistant: { publicId: string } };

  const chat = async () => {
    const res = await fetch(`${app.url}/api/v1/chat`, {
      method: 'POST',
      headers: { ...bearer(flooder.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId: assistant.publicId, message: 'hello there' }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
  };
  const read = async () => {
    const res = await fetch(`${app.url}/api/v1/assistants`, {
      headers: bearer(reader.secret),
      signal: AbortSignal.timeout(30_000),
    });
    return res.status;
  };
  const [chats, reads] = await Promise.all([
    Promise.all(Array.from({ length: 40 }, chat)),
    Promise.all(Array.from({ length: 10 }, read)),
  ]);
  const statuses = chats.map((c) => c.status);
  t.notOk(
    statuses.some((s) => s >= 500 && s !== 503),
    `no 500 (${JSON.stringify(Object.fromEntries(statuses.map((s) => [s, statuses.filter((x) => x === s).length])))})`,
  );
  t.ok(statuses.filter((s) => s === 200).length >= 2, 'the admitted chats answered');
  const refused = chats.filter((c) => c.status === 503);
  t.ok(refused.length > 0, 'past the queue, chats are refused');
  t.ok(
    refused.every((c) => Number(c.retryAfter) >= 1 && c.body.includes('SERVICE_OVERLOADED')),
    'every refusal is 503 SERVICE_OVERLOADED with Retry-After',
  );
  t.same([...new Set(reads)], [200], "the other tenant's reads all answered");
  const [open] = await app.deps.sql`select count(*)::int as n from usage_reservations where status = 'open'`;
  t.equal(open!.n, 0, 'no reservation is left open');
});

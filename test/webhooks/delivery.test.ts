import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { enqueueEvent } from '../../src/webhooks/index.js';
import { pruneMessages } from '../../src/webhooks/queries.js';
import { createOwner, type TestOwner } from '../helpers/identity.js';
import { api, eventually, startReceiver, startWebhookApp, type Receiver } from './helpers.js';
import type { TestApp } from '../helpers/app.js';

async function endpointFor(app: TestApp, owner: TestOwner, receiver: Receiver) {
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: receiver.url,
    events: ['document.processed'],
  });
  if (created.status !== 201) throw new Error(`endpoint not created: ${created.status} ${created.text}`);
  return created.body as { id: string; secret: string };
}

async function deliveriesOf(app: TestApp, owner: TestOwner, endpointId: string) {
  const page = await api(app.url, 'GET', `/api/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`, owner.secret);
  return page.body.deliveries as Array<{ messageId: string; status: string; attempts: number; lastStatusCode: number }>;
}

const ids = (receiver: Receiver) => receiver.received.map((r) => String(r.headers['webhook-id']));

t.test('an endpoint answering 503 gets the same webhook-id again until it answers 2xx', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await endpointFor(app, owner, receiver);
  let calls = 0;
  receiver.answer = () => (++calls <= 2 ? 503 : 200);

  t.equal(await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_1' }), 1);
  await eventually(() => receiver.received.some((r) => r.status === 200), 'a 2xx answer');
  t.same(
    receiver.received.map((r) => r.status),
    [503, 503, 200],
  );
  t.equal(new Set(ids(receiver)).size, 1, 'one webhook-id for every attempt');
  for (const hook of receiver.received) {
    const payload = new Webhook(endpoint.secret).verify(hook.body, hook.headers as Record<string, string>) as any;
    t.match(payload, { type: 'document.processed', data: { documentId: 'doc_1' } }, 'each attempt verifies');
  }
  const delivery = await eventually(async () => {
    const rows = await deliveriesOf(app, owner, endpoint.id);
    return rows[0]?.status === 'delivered' ? rows[0] : undefined;
  }, 'delivered');
  t.match(delivery, { status: 'delivered', attempts: 3, lastStatusCode: 200 });

  // Never 2xx: the schedule (four attempts here) runs out and the delivery is failed, with the last answer.
  receiver.answer = () => 503;
  await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_2' });
  const failed = await eventually(async () => {
    const rows = await deliveriesOf(app, owner, endpoint.id);
    return rows.find((d) => d.status === 'failed');
  }, 'the schedule running out');
  t.match(failed, { attempts: 4, lastStatusCode: 503, nextAttemptAt: null });
  t.equal(receiver.received.filter((r) => r.headers['webhook-id'] === failed.messageId).length, 4);
});

t.test('410 Gone disables the endpoint; enabling it again resumes new events', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await endpointFor(app, owner, receiver);
  receiver.answer = () => 410;
  await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_1' });
  const disabled = await eventually(async () => {
    const one = await api(app.url, 'GET', `/api/v1/webhook-endpoints/${endpoint.id}`, owner.secret);
    return one.body.enabled === false ? one.body : undefined;
  }, 'the endpoint disabled');
  t.equal(disabled.disabledReason, 'gone');
  t.equal(receiver.received.length, 1, 'no retry after 410');
  t.match((await deliveriesOf(app, owner, endpoint.id))[0], { status: 'disabled', attempts: 1, lastStatusCode: 410 });
  t.equal(
    await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_2' }),
    0,
    'a disabled endpoint gets no new events',
  );

  receiver.answer = () => 200;
  const enabled = await api(app.url, 'PATCH', `/api/v1/webhook-endpoints/${endpoint.id}`, owner.secret, {
    enabled: true,
  });
  t.match(enabled.body, { enabled: true, disabledReason: null });
  await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_3' });
  await eventually(() => receiver.received.some((r) => r.status === 200), 'delivery after enabling');
});

t.test('a restart loses nothing: queued and retrying messages are delivered by the next instance', async (t) => {
  const first = await startWebhookApp(t, { webhooks: { scheduleMs: [0, 200, 200, 200] } });
  const receiver = await startReceiver(t);
  const owner = await createOwner(first.database.sql);
  const endpoint = await endpointFor(first, owner, receiver);
  receiver.answer = () => 503;
  await enqueueEvent(first.database.sql, owner.accountId, 'document.processed', { n: 1 });
  await eventually(() => receiver.received.length >= 1, 'a first, failed attempt');
  const retried = ids(receiver)[0]!;
  await first.stop();

  // While no instance runs: more events are queued, and one delivery is left claimed by a worker that died mid-request.
  const sql = first.database.sql;
  for (const n of [2, 3, 4]) await enqueueEvent(sql, owner.accountId, 'document.processed', { n });
  await sql`
    update webhook_deliveries set attempts = 1, lease_token = 'dead-worker', locked_until = now() - interval '1 second'
    where id = (select d.id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
                where m.body like '%"n":4%')`;
  receiver.answer = () => 200;
  const second = await startWebhookApp(t, { database: first.database });
  await eventually(() => receiver.received.filter((r) => r.status === 200).length === 4, 'all four delivered', 15_000);
  const delivered = receiver.received.filter((r) => r.status === 200).map((r) => String(r.headers['webhook-id']));
  t.equal(new Set(delivered).size, 4, 'each message delivered once');
  t.ok(delivered.includes(retried), 'the retrying message kept its webhook-id across the restart');
  // A delivery is marked delivered just after the receiver answered: wait for the marks, not the answers.
  await eventually(
    async () =>
      (await deliveriesOf(second, owner, endpoint.id)).every((d: { status: string }) => d.status === 'delivered'),
    'all four marked delivered',
  );
  const rows = await deliveriesOf(second, owner, endpoint.id);
  t.same(
    rows.map((d) => d.status),
    ['delivered', 'delivered', 'delivered', 'delivered'],
  );
});

t.test('two instances deliver each message once, a bounded number at a time per endpoint', async (t) => {
  const perEndpoint = 2;
  const a = await startWebhookApp(t, { webhooks: { maxPerEndpoint: perEndpoint } });
  const b = await startWebhookApp(t, {
    database: a.database,
    redisPrefix: a.redisPrefix,
    webhooks: { maxPerEndpoint: perEndpoint },
  });
  const receiver = await startReceiver(t);
  receiver.delayMs = 20;
  const owner = await createOwner(a.database.sql);
  await endpointFor(a, owner, receiver);
  const count = 40;
  for (let n = 0; n < count; n++) await enqueueEvent(a.database.sql, owner.accountId, 'document.processed', { n });
  await eventually(() => receiver.received.length >= count, `${count} deliveries`, 20_000);
  // A little longer: a duplicate would arrive now if two instances had claimed the same delivery.
  await eventually(async () => {
    const [row] = await a.database.sql`select count(*)::int as n from webhook_deliveries where status <> 'delivered'`;
    return row!.n === 0;
  }, 'every delivery recorded');
  t.equal(receiver.received.length, count, 'no message sent twice');
  t.equal(new Set(ids(receiver)).size, count, 'every message sent');
  t.ok(receiver.maxInFlight <= 2 * perEndpoint, `at most ${2 * perEndpoint} in flight (saw ${receiver.maxInFlight})`);
  t.ok(b.app.server, 'the second instance ran beside the first');
});

t.test('messages are kept 30 days, then deleted unless a delivery is still pending', async (t) => {
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const endpoint = await endpointFor(app, owner, receiver);
  const sql = app.database.sql;
  await enqueueEvent(sql, owner.accountId, 'document.processed', { n: 1 });
  await eventually(async () => (await deliveriesOf(app, owner, endpoint.id))[0]?.status === 'delivered', 'delivered');
  await app.stop(); // nobody delivers the next one: it stays pending
  await enqueueEvent(sql, owner.accountId, 'document.processed', { n: 2 });
  await sql`update webhook_messages set created_at = now() - interval '31 days'`;
  t.equal(await pruneMessages(sql, 30), 1, 'the delivered message is deleted');
  const left =
    await sql`select m.body, d.status from webhook_messages m join webhook_deliveries d on d.message_id = m.id`;
  t.equal(left.length, 1);
  t.match(left[0], { status: 'pending', body: /"n":2/ }, 'the pending one stays');
});

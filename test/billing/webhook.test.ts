import t from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOwner, dashboardHeaders, login, type TestOwner } from '../helpers/identity.js';
import { PolarSimulator, type SimSubscription } from '../helpers/polar-simulator.js';

const sim = await PolarSimulator.start(t);
const products = {
  starter: sim.addProduct('Starter'),
  pro: sim.addProduct('Pro', 4500),
  business: sim.addProduct('Business', 15000),
};
const stranger = sim.addProduct('Not on the allowlist');
const app = await startTestApp(t, { env: sim.billingEnv(products) });
sim.webhookUrl = `${app.url}/api/webhooks/polar`;
const { sql } = app.database;

async function hostingOf(accountId: string) {
  const [row] = await sql<
    [
      {
        planCode: string;
        periodStart: Date;
        periodEnd: Date;
        billingSubscriptionId: string | null;
        billingSubscriptionStatus: string | null;
      },
    ]
  >`
    select plan_code, period_start, period_end, billing_subscription_id, billing_subscription_status from hosting_accounts where account_id = ${accountId}`;
  return row!;
}

/** An owner who bought `plan` through the real checkout route and whose subscription events were delivered. */
async function subscribe(
  app: TestApp,
  owner: TestOwner,
  plan: 'starter' | 'pro' | 'business',
): Promise<SimSubscription> {
  const cookie = await login(app.url, owner.email, owner.password);
  const res = await fetch(`${app.url}/api/v1/account/billing/checkout`, {
    method: 'POST',
    headers: dashboardHeaders(app.url, cookie),
    body: JSON.stringify({ planCode: plan }),
  });
  const { url } = (await res.json()) as { url: string };
  const checkoutId = url.split('polar_c_')[1]!;
  const before = sim.events.length;
  const sub = sim.completeCheckout(checkoutId);
  const statuses = await sim.deliverAll(sim.events.slice(before));
  if (statuses.some((s) => s !== 200)) throw new Error(`deliveries answered ${statuses.join(',')}`);
  return sub;
}

t.test('checkout -> subscription.created/active: plan and period synced from the subscription', async (t) => {
  const owner = await createOwner(sql);
  const sub = await subscribe(app, owner, 'pro');
  const h = await hostingOf(owner.accountId);
  t.equal(h.planCode, 'pro');
  t.equal(h.periodStart.toISOString(), new Date(sub.current_period_start).toISOString());
  t.equal(h.periodEnd.toISOString(), new Date(sub.current_period_end!).toISOString());
  t.equal(h.billingSubscriptionId, sub.id);
  const cookie = await login(app.url, owner.email, owner.password);
  const summary = (await (await fetch(`${app.url}/api/v1/account/usage/summary`, { headers: { cookie } })).json()) as {
    summary: { planCode: string; limitMicros: number };
  };
  t.match(summary.summary, { planCode: 'pro', limitMicros: 45_000_000 });

  sim.renew(sub.id);
  t.same(await sim.deliverAll(sim.events.slice(-1)), [200]);
  t.equal(
    (await hostingOf(owner.accountId)).periodStart.toISOString(),
    new Date(sim.subscriptions.get(sub.id)!.current_period_start).toISOString(),
    'renewal moves the period',
  );

  sim.cancel(sub.id);
  await sim.deliverAll(sim.events.slice(-1));
  t.equal(
    (await hostingOf(owner.accountId)).planCode,
    'pro',
    'a cancellation keeps the plan until the subscription ends',
  );
  sim.revoke(sub.id);
  await sim.deliverAll(sim.events.slice(-1));
  t.match(
    await hostingOf(owner.accountId),
    { planCode: 'free', billingSubscriptionStatus: 'revoked' },
    'revoked returns the account to free',
  );
});

t.test('a replay, even after later changes, changes nothing and answers 200', async (t) => {
  const owner = await createOwner(sql);
  const before = sim.events.length;
  await subscribe(app, owner, 'starter');
  const delivered = sim.events.slice(before);
  // An operator moves the account afterwards; the provider then redelivers old events (re-signed, same id).
  await sql`update hosting_accounts set plan_code = 'business' where account_id = ${owner.accountId}`;
  for (const event of delivered) {
    const res = await sim.deliver(event);
    t.equal(res.status, 200);
    t.same(await res.json(), { ok: true, replay: true });
  }
  t.equal((await hostingOf(owner.accountId)).planCode, 'business', 'the replay did not re-apply the old plan');
  const [stored] = await sql<
    [{ n: number }]
  >`select count(*)::int8 as n from idempotency_keys where scope = 'billing:polar' and key = ${delivered[0]!.webhookId}`;
  t.equal(stored?.n, 1, 'the webhook-id is stored durably');
});

t.test('only active or trialing subscriptions of allowlisted products grant a plan', async (t) => {
  const owner = await createOwner(sql);
  const sub = await subscribe(app, owner, 'business');
  sim.setStatus(sub.id, 'past_due');
  await sim.deliverAll(sim.events.slice(-1));
  t.equal((await hostingOf(owner.accountId)).planCode, 'free', 'past_due grants nothing');
  sim.setStatus(sub.id, 'trialing');
  await sim.deliverAll(sim.events.slice(-1));
  t.equal((await hostingOf(owner.accountId)).planCode, 'business', 'trialing grants the plan');

  const other = await createOwner(sql);
  sim.checkouts.set('forged', {
    id: 'forged',
    productId: stranger,
    externalCustomerId: other.accountId,
    metadata: { hosting_account_id: other.accountId },
    successUrl: null,
  });
  const before = sim.events.length;
  sim.completeCheckout('forged');
  t.same(await sim.deliverAll(sim.events.slice(before)), [200, 200]);
  t.equal((await hostingOf(other.accountId)).planCode, 'free', 'an unknown product never grants a plan');
});

t.test('bad signatures are 400 and leave no trace', async (t) => {
  const owner = await createOwner(sql);
  sim.checkouts.set('sig', {
    id: 'sig',
    productId: products.pro,
    externalCustomerId: owner.accountId,
    metadata: { hosting_account_id: owner.accountId },
    successUrl: null,
  });
  const before = sim.events.length;
  sim.completeCheckout('sig');
  const [created] = sim.events.slice(before);
  for (const [label, res] of [
    ['wrong key', await sim.deliver(created!, { sign: 'wrong' })],
    ['stale timestamp', await sim.deliver(created!, { timestampSeconds: Math.floor(Date.now() / 1000) - 3600 })],
    ['tampered body', await sim.deliver(created!, { body: created!.body.replace('"incomplete"', '"active"') })],
  ] as const) {
    t.equal(res.status, 400, label);
    t.equal(((await res.json()) as { code: string }).code, 'BILLING_BAD_SIGNATURE');
  }
  const missing = await fetch(sim.webhookUrl!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: created!.body,
  });
  t.equal(missing.status, 400, 'no signature headers');
  await missing.arrayBuffer();
  const [claims] = await sql<
    [{ n: number }]
  >`select count(*)::int8 as n from idempotency_keys where key = ${created!.webhookId}`;
  t.equal(claims?.n, 0);
  t.equal((await hostingOf(owner.accountId)).planCode, 'free');

  const raw = await sim.deliver(created!, { sign: 'raw', extraSignatures: ['v1,bm90IGl0'] });
  t.equal(raw.status, 200, 'the raw-bytes key and a second signature are accepted');
  await raw.arrayBuffer();
});

t.test('a failure releases the claim and answers 5xx so the provider retries', async (t) => {
  const owner = await createOwner(sql);
  sim.checkouts.set('fail', {
    id: 'fail',
    productId: products.pro,
    externalCustomerId: owner.accountId,
    metadata: { hosting_account_id: owner.accountId },
    successUrl: null,
  });
  const before = sim.events.length;
  sim.completeCheckout('fail');
  const events = sim.events.slice(before);
  await sql`alter table billing_subscriptions rename to billing_subscriptions_away`;
  let restored = false;
  const restore = async () => {
    if (!restored) await sql`alter table billing_subscriptions_away rename to billing_subscriptions`;
    restored = true;
  };
  t.teardown(restore);
  const failed = await sim.deliver(events[0]!);
  t.equal(failed.status, 500);
  await failed.arrayBuffer();
  const [claims] = await sql<
    [{ n: number }]
  >`select count(*)::int8 as n from idempotency_keys where key = ${events[0]!.webhookId}`;
  t.equal(claims?.n, 0, 'the claim was released');
  await restore();
  t.same(await sim.deliverAll(events), [200, 200], 'the retry is processed');
  t.equal((await hostingOf(owner.accountId)).planCode, 'pro');
});

t.test('events Parley does not act on are acknowledged', async (t) => {
  const res = await sim.deliver(sim.emitOther('order.paid', { id: 'ord_1' }));
  t.equal(res.status, 200);
  t.same(await res.json(), { ok: true, replay: false });
});

t.test('503 when BILLING_WEBHOOK_SECRET is unset', async (t) => {
  const bare = await startTestApp(t);
  const res = await sim.deliver(sim.emitOther('order.paid', { id: 'ord_2' }), {
    url: `${bare.url}/api/webhooks/polar`,
  });
  t.equal(res.status, 503);
  t.equal(((await res.json()) as { code: string }).code, 'BILLING_NOT_CONFIGURED');
});

t.test('secrets never reach a log line', async (t) => {
  const text = app.logs.text();
  t.notOk(text.includes(sim.accessToken), 'access token');
  t.notOk(text.includes(sim.webhookSecret.slice(6)), 'webhook secret');
});

import t from 'tap';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { PolarSimulator } from '../helpers/polar-simulator.js';

/**
 * Replaying every webhook 5 times in shuffled order leaves the same final state as delivering each once in order.
 * Two services with their own databases hold the same accounts (fixed ids), so the events are byte-identical.
 */
const sim = await PolarSimulator.start(t);
const products = {
  starter: sim.addProduct('Starter'),
  pro: sim.addProduct('Pro'),
  business: sim.addProduct('Business'),
};
const env = sim.billingEnv(products);
const inOrder = await startTestApp(t, { env });
const shuffled = await startTestApp(t, { env });
const ACCOUNTS = ['acct_replayA000000000001', 'acct_replayB000000000002', 'acct_replayC000000000003'];

for (const app of [inOrder, shuffled]) {
  for (const [i, id] of ACCOUNTS.entries()) {
    const userId = `usr_replay${i}0000000000000`;
    await app.database
      .sql`insert into users (id, email, password_hash) values (${userId}, ${`replay${i}@example.test`}, 'x')`;
    await app.database.sql`insert into accounts (id, owner_user_id) values (${id}, ${userId})`;
    await app.database
      .sql`insert into hosting_accounts (account_id, period_start, period_end) values (${id}, '2030-01-01T00:00:00Z', '2030-02-01T00:00:00Z')`;
  }
}

function checkout(accountId: string, productId: string): string {
  const id = `co_${sim.checkouts.size}`;
  sim.checkouts.set(id, {
    id,
    productId,
    externalCustomerId: accountId,
    metadata: { hosting_account_id: accountId },
    successUrl: null,
  });
  return id;
}

// A: starter, renewed, upgraded to pro by a second subscription, the first revoked later.
const a1 = sim.completeCheckout(checkout(ACCOUNTS[0]!, products.starter));
sim.renew(a1.id);
const a2 = sim.completeCheckout(checkout(ACCOUNTS[0]!, products.pro));
sim.revoke(a1.id);
// B: business, canceled, uncanceled, renewed, canceled again and revoked: ends on free.
const b1 = sim.completeCheckout(checkout(ACCOUNTS[1]!, products.business));
sim.cancel(b1.id);
sim.uncancel(b1.id);
sim.renew(b1.id);
sim.cancel(b1.id);
sim.revoke(b1.id);
// C: pro, past_due, active again, renewed twice.
const c1 = sim.completeCheckout(checkout(ACCOUNTS[2]!, products.pro));
sim.setStatus(c1.id, 'past_due');
sim.setStatus(c1.id, 'active');
sim.renew(c1.id);
sim.renew(c1.id);
sim.emitOther('order.paid', { id: 'ord_x' });
void a2;

async function finalState(app: TestApp) {
  const { sql } = app.database;
  const hosting = await sql`
    select account_id, plan_code, status, period_start, period_end, period_anchor, billing_customer_id, billing_subscription_id,
           billing_subscription_status, billing_product_id
    from hosting_accounts order by account_id`;
  const subs = await sql`
    select id, account_id, customer_id, product_id, status, revoked, current_period_start, current_period_end, source_modified_at, source_rank
    from billing_subscriptions order by id`;
  const claims = await sql`select key, response from idempotency_keys where scope = 'billing:polar' order by key`;
  return { hosting: [...hosting], subs: [...subs], claims: [...claims] };
}

function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed;
  const random = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

t.test('5x shuffled replay == each once in order', async (t) => {
  const once = [];
  for (const event of sim.events)
    once.push((await sim.deliver(event, { url: `${inOrder.url}/api/webhooks/polar` })).status);
  t.ok(
    once.every((s) => s === 200),
    'in-order deliveries accepted',
  );

  const seed = Date.now() % 10_000;
  const deliveries = shuffle(
    sim.events.flatMap((e) => [e, e, e, e, e]),
    seed,
  );
  const statuses = await Promise.all(
    // Several at once: concurrent duplicates of one webhook-id must still apply it once.
    chunk(deliveries, 6).map(async (batch) => {
      const out: number[] = [];
      for (const event of batch) {
        const res = await sim.deliver(event, { url: `${shuffled.url}/api/webhooks/polar` });
        out.push(res.status);
        await res.arrayBuffer();
      }
      return out;
    }),
  );
  t.ok(
    statuses.flat().every((s) => s === 200),
    `every delivery answered 200 (seed ${seed})`,
  );

  const expected = await finalState(inOrder);
  const actual = await finalState(shuffled);
  t.same(actual.hosting, expected.hosting, 'same hosting accounts (plan, period, subscription)');
  t.same(actual.subs, expected.subs, 'same subscription states');
  t.same(
    actual.claims.map((c) => c['key']),
    expected.claims.map((c) => c['key']),
    'each webhook-id claimed once',
  );
  t.match(
    expected.hosting.map((h) => [h['accountId'], h['planCode']]),
    [
      [ACCOUNTS[0], 'pro'],
      [ACCOUNTS[1], 'free'],
      [ACCOUNTS[2], 'pro'],
    ],
    'the scenario ends where a customer would expect',
  );
});

function chunk<T>(items: T[], parts: number): T[][] {
  const out: T[][] = Array.from({ length: parts }, () => []);
  items.forEach((item, i) => out[i % parts]!.push(item));
  return out;
}

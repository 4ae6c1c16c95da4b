import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { PolarSimulator } from '../helpers/polar-simulator.js';

const sim = await PolarSimulator.start(t);
const products = { starter: sim.addProduct('Starter'), pro: sim.addProduct('Pro') };
const app = await startTestApp(t, { env: sim.billingEnv(products) });
sim.webhookUrl = `${app.url}/api/webhooks/polar`;
const owner = await createOwner(app.database.sql);
const cookie = await login(app.url, owner.email, owner.password);
const post = (path: string, body: unknown, headers = dashboardHeaders(app.url, cookie)) =>
  fetch(`${app.url}/api/v1/account/billing${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

t.test('checkout: the server maps the plan to its allowlisted product', async (t) => {
  const res = await post('/checkout', { planCode: 'pro' });
  t.equal(res.status, 200);
  const { url } = (await res.json()) as { url: string };
  t.ok(url.startsWith(`${sim.url}/checkout/`), 'the hosted checkout URL');
  const call = sim.requests.at(-1)!;
  t.equal(call.path, '/v1/checkouts/');
  t.equal(call.authorization, `Bearer ${sim.accessToken}`, 'the access token goes to the provider only');
  t.same(call.body['products'], [products.pro]);
  t.equal(call.body['external_customer_id'], owner.accountId);
  t.same(call.body['metadata'], { hosting_account_id: owner.accountId });
  t.equal(call.body['success_url'], undefined, 'no success URL without PUBLIC_URL');
  t.notOk(JSON.stringify(await (await post('/checkout', { planCode: 'starter' })).json()).includes(sim.accessToken));
});

t.test('checkout refusals: callers never choose a product', async (t) => {
  for (const [label, body, code] of [
    ['a product id', { planCode: 'pro', productId: products.starter }, 'VALIDATION_FAILED'],
    ['only a product id', { productId: products.pro }, 'VALIDATION_FAILED'],
    ['free', { planCode: 'free' }, 'VALIDATION_FAILED'],
    ['a plan with no product configured', { planCode: 'business' }, 'BILLING_PLAN_UNAVAILABLE'],
  ] as const) {
    const res = await post('/checkout', body);
    t.equal(res.status, 400, label);
    t.equal(((await res.json()) as { code: string }).code, code, label);
  }
  const key = await post(
    '/checkout',
    { planCode: 'pro' },
    { ...bearer(owner.secret), 'content-type': 'application/json' },
  );
  t.equal(key.status, 401, 'an API key cannot start a checkout');
  await key.arrayBuffer();
});

t.test('portal: 409 before any purchase, a portal link after', async (t) => {
  const other = await createOwner(app.database.sql);
  const otherCookie = await login(app.url, other.email, other.password);
  let res = await post('/portal', {}, dashboardHeaders(app.url, otherCookie));
  t.equal(res.status, 409);
  t.equal(((await res.json()) as { code: string }).code, 'BILLING_NO_CUSTOMER');

  const started = (await (
    await post('/checkout', { planCode: 'starter' }, dashboardHeaders(app.url, otherCookie))
  ).json()) as { url: string };
  const before = sim.events.length;
  sim.completeCheckout(started.url.split('polar_c_')[1]!);
  t.same(await sim.deliverAll(sim.events.slice(before)), [200, 200]);
  res = await post('/portal', {}, dashboardHeaders(app.url, otherCookie));
  t.equal(res.status, 200);
  t.match(await res.json(), { url: /\/portal\?customer_session_token=/ });
  t.equal(sim.requests.at(-1)!.body['external_customer_id'], other.accountId);

  const overview = await fetch(`${app.url}/api/v1/account/billing`, { headers: { cookie: otherCookie } });
  t.match(await overview.json(), {
    billing: {
      server: 'sandbox',
      planCode: 'starter',
      subscription: { status: 'active', planCode: 'starter' },
      plans: [
        { planCode: 'starter', available: true, current: true },
        { planCode: 'pro', available: true, current: false },
        { planCode: 'business', available: false, current: false },
      ],
    },
  });
});

t.test('a provider failure is a 502 without provider details', async (t) => {
  sim.products.delete(products.pro);
  t.teardown(() => void sim.products.set(products.pro, { id: products.pro, name: 'Pro', amount: 4500 }));
  const res = await post('/checkout', { planCode: 'pro' });
  t.equal(res.status, 502);
  const body = (await res.json()) as { code: string; details: unknown };
  t.equal(body.code, 'BILLING_PROVIDER_ERROR');
  t.same(body.details, { providerStatus: 422 });
});

t.test('without BILLING_ACCESS_TOKEN every billing route is 503', async (t) => {
  const bare = await startTestApp(t, { env: { BILLING_PRODUCT_ID_PRO: products.pro } });
  const someone = await createOwner(bare.database.sql);
  const c = await login(bare.url, someone.email, someone.password);
  const h = dashboardHeaders(bare.url, c);
  for (const [method, path, body] of [
    ['GET', '', undefined],
    ['POST', '/checkout', { planCode: 'pro' }],
    ['POST', '/portal', {}],
  ] as const) {
    const res = await fetch(`${bare.url}/api/v1/account/billing${path}`, {
      method,
      headers: h,
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    t.equal(res.status, 503, `${method} ${path || '/'}`);
    t.equal(((await res.json()) as { code: string }).code, 'BILLING_NOT_CONFIGURED');
  }
});

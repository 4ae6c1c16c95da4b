import { createHmac, randomBytes } from 'node:crypto';
import t from 'tap';
import { signWebhook, verifyWebhook } from '../../src/billing/index.js';
import { polarBaseUrl } from '../../src/billing/index.js';

const key = randomBytes(24);
const secret = `whsec_${key.toString('base64')}`;
const body = Buffer.from('{"type":"subscription.active","data":{"id":"sub_1"}}');
const now = Date.UTC(2030, 0, 1);
const ts = String(Math.floor(now / 1000));
const sig = (k: Buffer, id = 'msg_1', stamp = ts, b: Buffer | string = body) => signWebhook(k, id, stamp, b);

t.test('Standard Webhooks: the whsec_ base64 key signs "id.timestamp.body"', async (t) => {
  const expected = createHmac('sha256', key).update(`msg_1.${ts}.${body.toString()}`).digest('base64');
  t.equal(sig(key), `v1,${expected}`);
  t.same(verifyWebhook({ id: 'msg_1', timestamp: ts, signature: sig(key) }, body, secret, now), { ok: true });
});

t.test('raw-bytes secrets (older Polar) are accepted too', async (t) => {
  const raw = Buffer.from(secret, 'utf8');
  t.same(verifyWebhook({ id: 'msg_1', timestamp: ts, signature: sig(raw) }, body, secret, now), { ok: true });
  const plain = 'polar_whs_plainsecret';
  t.same(verifyWebhook({ id: 'msg_1', timestamp: ts, signature: sig(Buffer.from(plain)) }, body, plain, now), {
    ok: true,
  });
});

t.test('several signatures: one valid v1 is enough; other versions are ignored', async (t) => {
  const wrong = sig(randomBytes(24));
  t.same(verifyWebhook({ id: 'msg_1', timestamp: ts, signature: `v1a,xyz ${wrong} ${sig(key)}` }, body, secret, now), {
    ok: true,
  });
  t.same(
    verifyWebhook({ id: 'msg_1', timestamp: ts, signature: `${wrong} v2,${sig(key).slice(3)}` }, body, secret, now),
    { ok: false, why: 'no_match' },
  );
});

t.test('refusals: tampered body, other id, missing headers, stale or future timestamp', async (t) => {
  const good = sig(key);
  t.same(
    verifyWebhook(
      { id: 'msg_1', timestamp: ts, signature: good },
      Buffer.from(body.toString().replace('sub_1', 'sub_2')),
      secret,
      now,
    ),
    { ok: false, why: 'no_match' },
  );
  t.same(verifyWebhook({ id: 'msg_2', timestamp: ts, signature: good }, body, secret, now), {
    ok: false,
    why: 'no_match',
  });
  t.same(verifyWebhook({ id: undefined, timestamp: ts, signature: good }, body, secret, now), {
    ok: false,
    why: 'missing_headers',
  });
  t.same(verifyWebhook({ id: 'msg_1', timestamp: 'soon', signature: good }, body, secret, now), {
    ok: false,
    why: 'bad_timestamp',
  });
  const old = String(Math.floor(now / 1000) - 301);
  t.same(verifyWebhook({ id: 'msg_1', timestamp: old, signature: sig(key, 'msg_1', old) }, body, secret, now), {
    ok: false,
    why: 'stale',
  });
  const edge = String(Math.floor(now / 1000) - 300);
  t.same(
    verifyWebhook({ id: 'msg_1', timestamp: edge, signature: sig(key, 'msg_1', edge) }, body, secret, now),
    { ok: true },
    '300 s is still in',
  );
  const future = String(Math.floor(now / 1000) + 301);
  t.same(verifyWebhook({ id: 'msg_1', timestamp: future, signature: sig(key, 'msg_1', future) }, body, secret, now), {
    ok: false,
    why: 'stale',
  });
  t.same(verifyWebhook({ id: 'msg_1', timestamp: ts, signature: 'v1,' }, body, secret, now), {
    ok: false,
    why: 'no_match',
  });
});

t.test('BILLING_SERVER picks the API base; default sandbox; BILLING_API_BASE_URL overrides', async (t) => {
  const base = {
    BILLING_ACCESS_TOKEN: undefined,
    BILLING_WEBHOOK_SECRET: undefined,
    BILLING_API_BASE_URL: undefined,
    BILLING_PRODUCT_ID_STARTER: undefined,
    BILLING_PRODUCT_ID_PRO: undefined,
    BILLING_PRODUCT_ID_BUSINESS: undefined,
    PUBLIC_URL: undefined,
  };
  t.equal(polarBaseUrl({ ...base, BILLING_SERVER: 'sandbox' }), 'https://sandbox-api.polar.sh');
  t.equal(polarBaseUrl({ ...base, BILLING_SERVER: 'production' }), 'https://api.polar.sh');
  t.equal(
    polarBaseUrl({ ...base, BILLING_SERVER: 'production', BILLING_API_BASE_URL: 'http://127.0.0.1:9' }),
    'http://127.0.0.1:9',
  );
  const { loadConfig } = await import('../../src/config/index.js');
  t.equal(loadConfig({ DATA_DIR: '/tmp/parley-billing-cfg', SECRET_KEY: 'x'.repeat(32) }).BILLING_SERVER, 'sandbox');
});

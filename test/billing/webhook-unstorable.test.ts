import t from 'tap';
import { randomBytes } from 'node:crypto';
import { signingKeys, signWebhook } from '../../src/billing/index.js';
import { startTestApp } from '../helpers/app.js';

const secret = `whsec_${randomBytes(24).toString('base64')}`;
const app = await startTestApp(t, { env: { BILLING_WEBHOOK_SECRET: secret } });
const [key] = signingKeys(secret);

/** A correctly signed delivery of `body` with the given Content-Type (none when undefined). */
async function deliver(body: string, contentType: string | undefined) {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`${app.url}/api/webhooks/polar`, {
    method: 'POST',
    headers: {
      ...(contentType ? { 'content-type': contentType } : {}),
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': signWebhook(key!, id, timestamp, body),
    },
    body: Buffer.from(body),
  });
  return { status: res.status, body: (await res.json()) as { code?: string; ok?: boolean } };
}

const unstorable = {
  'a NUL in the type': '{"type":"checkout.updated\\u0000","data":{}}',
  'a NUL in the data': '{"type":"order.created","data":{"note":"a\\u0000b"}}',
  'a NUL in a key': '{"type":"order.created","data":{"a\\u0000":1}}',
  'a lone surrogate': '{"type":"order.created\\ud800","data":{}}',
};

for (const contentType of ['text/plain', 'application/json', 'application/octet-stream', undefined]) {
  t.test(`Content-Type ${contentType ?? '(none)'}: a signed body PostgreSQL cannot store is a 400`, async (t) => {
    for (const [what, body] of Object.entries(unstorable)) {
      const res = await deliver(body, contentType);
      t.equal(res.status, 400, `${what}: 400, so the provider stops retrying`);
      t.equal(res.body.code, 'VALIDATION_FAILED', what);
    }
    const fine = await deliver('{"type":"order.created","data":{"note":"ok"}}', contentType);
    t.equal(fine.status, 200, 'a storable event is still accepted');
    t.equal(fine.body.ok, true);
  });
}

import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/src/index.js';
import { newEndpointSecret, signatureHeader } from '../../src/webhooks/index.js';

const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { endpointId: 'x' } });

t.test("the SDK's verifyWebhook accepts what the reference library signs and refuses the rest", async (t) => {
  const secret = newEndpointSecret();
  const now = new Date();
  const headers = {
    'webhook-id': 'msg_abc',
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign('msg_abc', now, body),
  };
  t.match(await verifyWebhook(secret, headers, body), { type: 'webhook.test', data: { endpointId: 'x' } });
  const event = await verifyWebhook(secret, headers, body);
  // The event type narrows `data` (a compile-time proof, checked by npm run typecheck).
  if (event.type === 'voice.session.ended') t.type(event.data.billableSeconds satisfies number, 'number');
  else if (event.type === 'webhook.test') t.equal(event.data.endpointId satisfies string, 'x');
  t.match(await verifyWebhook(secret, new Headers(headers), new TextEncoder().encode(body)), { type: 'webhook.test' });

  const other = newEndpointSecret();
  await t.rejects(verifyWebhook(other, headers, body), WebhookVerificationError, 'another secret');
  await t.rejects(verifyWebhook(secret, headers, body.replace('x', 'y')), WebhookVerificationError, 'a changed body');
  await t.rejects(verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_other' }, body), WebhookVerificationError);
  await t.rejects(
    verifyWebhook(secret, headers, body, { now: () => now.getTime() + 10 * 60_000 }),
    WebhookVerificationError,
    'a replay ten minutes later',
  );
  await t.rejects(verifyWebhook(secret, { 'webhook-id': 'msg_abc' }, body), WebhookVerificationError, 'no headers');
});

t.test("Parley's signatures verify with the reference library, with one or two secrets", async (t) => {
  const current = newEndpointSecret();
  const previous = newEndpointSecret();
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'webhook-id': 'msg_two',
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatureHeader([current, previous], 'msg_two', timestamp, body),
  };
  for (const secret of [current, previous]) {
    t.match(new Webhook(secret).verify(body, headers), { type: 'webhook.test' });
    t.match(await verifyWebhook(secret, headers, body), { type: 'webhook.test' });
  }
  t.throws(() => new Webhook(newEndpointSecret()).verify(body, headers));
});

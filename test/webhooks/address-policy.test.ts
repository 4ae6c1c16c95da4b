import t from 'tap';
import type { LookupAll } from '../../src/documents/index.js';
import { enqueueEvent } from '../../src/webhooks/index.js';
import { createOwner } from '../helpers/identity.js';
import { api, eventually, startReceiver, startWebhookApp } from './helpers.js';

/** Names for this test: `public.test` resolves to a public address, then (rebinding) to loopback. */
function rebindingLookup(): { lookup: LookupAll; rebind: () => void } {
  let answer = '93.184.215.14';
  return {
    lookup: async (hostname) => {
      if (hostname === 'intranet.test') return [{ address: '10.1.2.3', family: 4 }];
      if (hostname === 'public.test') return [{ address: answer, family: 4 }];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    },
    rebind: () => void (answer = '127.0.0.1'),
  };
}

t.test('without WEBHOOK_ALLOW_PRIVATE_NETWORKS, loopback, private and metadata targets are refused', async (t) => {
  const dns = rebindingLookup();
  const app = await startWebhookApp(t, {
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' },
    webhooks: { lookup: dns.lookup },
  });
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const port = new URL(receiver.url).port;
  for (const url of [
    receiver.url, // http://127.0.0.1:<port>/hooks
    `http://localhost:${port}/hooks`,
    `http://[::1]:${port}/hooks`,
    `http://[::ffff:127.0.0.1]:${port}/hooks`,
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.5/hooks',
    'http://intranet.test/hooks',
  ]) {
    const refused = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
      url,
      events: ['document.processed'],
    });
    t.equal(refused.status, 400, `${url} refused`);
    t.equal(refused.body.code, 'WEBHOOK_URL_NOT_ALLOWED');
    t.match(refused.body.details, { field: 'url' });
    t.match(refused.body.error, /WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/, 'the refusal names the setting that allows it');
  }

  // A name that resolved to a public address when registered and to loopback at delivery time: never contacted.
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: `http://public.test:${port}/hooks`,
    events: ['document.processed'],
  });
  t.equal(created.status, 201, 'a public name is accepted');
  const patched = await api(app.url, 'PATCH', `/api/v1/webhook-endpoints/${created.body.id}`, owner.secret, {
    url: receiver.url,
  });
  t.equal(patched.status, 400, 'nor can an update point it at loopback');
  dns.rebind();
  await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_1' });
  const attempt = await eventually(async () => {
    const page = await api(app.url, 'GET', `/api/v1/webhook-endpoints/${created.body.id}/deliveries`, owner.secret);
    const delivery = page.body.deliveries[0];
    return delivery && delivery.attempts >= 1 && delivery.lastError !== null ? delivery : undefined;
  }, 'the first attempt');
  t.match(attempt.lastError, /private, local or reserved/);
  t.equal(attempt.lastStatusCode, null);
  t.equal(receiver.received.length, 0, 'the loopback receiver was never contacted');
});

t.test('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lets a local receiver in (local development)', async (t) => {
  const dns = rebindingLookup();
  dns.rebind();
  const app = await startWebhookApp(t, {
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    webhooks: { lookup: dns.lookup },
  });
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const created = await api(app.url, 'POST', '/api/v1/webhook-endpoints', owner.secret, {
    url: `http://public.test:${new URL(receiver.url).port}/hooks`,
    events: ['document.processed'],
  });
  t.equal(created.status, 201);
  await enqueueEvent(app.database.sql, owner.accountId, 'document.processed', { documentId: 'doc_1' });
  await eventually(() => receiver.received.length === 1, 'the delivery');
});

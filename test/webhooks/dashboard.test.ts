/**
 * The dashboard's Webhooks page in Debian's Chromium against the whole service: add an endpoint (the secret shown
 * once), send a test event that the receiver verifies with that secret, see the delivery, replay it, and the secret
 * is gone after a reload.
 */
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { createOwner } from '../helpers/identity.js';
import { eventually, startReceiver, startWebhookApp } from './helpers.js';

t.test('an owner adds an endpoint, sends a test event, sees the delivery and replays it', async (t) => {
  await ensureDashboardBuilt();
  const app = await startWebhookApp(t);
  const receiver = await startReceiver(t);
  const owner = await createOwner(app.database.sql);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);

  await signInToDashboard(page, app.url, owner);
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  // Before signing in the dashboard asks who is signed in and is answered 401: not an error of this page.
  const errorsBefore = browser.errors.length;

  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByLabel('Description (optional)').fill('CRM');
  await page.getByRole('checkbox', { name: /document\.processed/ }).check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secretBox = page.getByLabel('Webhook signing secret');
  await secretBox.waitFor();
  const secret = (await secretBox.innerText()).trim();
  t.match(secret, /^whsec_/);
  t.match(await page.getByRole('region', { name: 'Signing secret' }).innerText(), /only time the secret is shown/);
  await page.getByRole('button', { name: 'I have stored it' }).click();

  const card = page.getByRole('region', { name: `Endpoint ${receiver.url}` });
  t.match(await card.innerText(), /voice\.session\.started, voice\.session\.ended, document\.processed/);
  await card.getByRole('button', { name: 'Send test event' }).click();
  await eventually(() => receiver.received.length === 1, 'the test event');
  const hook = receiver.received[0]!;
  t.match(new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>), { type: 'webhook.test' });

  const deliveries = card.getByRole('table', { name: 'Deliveries' });
  await eventually(async () => {
    await card.getByRole('button', { name: 'Refresh' }).click();
    return /delivered/.test(await deliveries.innerText().catch(() => ''));
  }, 'the delivery shown as delivered');
  t.match(await deliveries.innerText(), /webhook\.test[\s\S]*HTTP 200/);

  await card
    .getByRole('button', { name: /^Replay webhook\.test/ })
    .first()
    .click();
  await eventually(() => receiver.received.length === 2, 'the replay');
  t.equal(receiver.received[1]!.headers['webhook-id'], hook.headers['webhook-id'], 'the same webhook-id');
  await eventually(
    async () => (await deliveries.getByRole('row').count()) === 3,
    'two deliveries listed (and the header row)',
  );

  await page.reload();
  await card.waitFor();
  t.notMatch(await page.locator('main').innerText(), new RegExp(secret.slice(6, 30).replace(/[+/]/g, '.')));
  t.equal(await page.getByLabel('Webhook signing secret').count(), 0, 'the secret is not shown again');
  t.same(browser.errors.slice(errorsBefore), [], 'no console errors on the Webhooks page');
});

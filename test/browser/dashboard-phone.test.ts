/**
 * The dashboard's Phone numbers page, in Debian's Chromium: the owner adds a number (the auth token is typed once and
 * never shown), sees the voice URL to paste into the carrier's console, a bad number is refused naming the field; a
 * simulated carrier then calls the number and the conversations page marks the call as a phone call with the
 * caller's number masked; finally the owner deletes the number.
 */
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  callParams,
  callWebhook,
  mulawSilence,
  mulawSpeech,
  openCarrierStream,
  streamOfTwiml,
} from '../telephony/carrier.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

await ensureDashboardBuilt();

t.test('add a number, see the voice URL, a phone call marked in conversations, delete', async (t) => {
  const app = await startTestApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Phone numbers' }).click();
  await page.getByRole('heading', { name: 'Phone numbers', level: 1 }).waitFor();
  await page.getByText('No phone numbers yet.').waitFor();

  const form = page.getByRole('form', { name: 'Add a phone number' });
  await form.getByLabel('Phone number (E.164)').fill('555-0100');
  await form.getByLabel('Carrier account SID').fill(ACCOUNT_SID);
  await form.getByLabel('Carrier auth token').fill(AUTH_TOKEN);
  await form.getByRole('button', { name: 'Add number' }).click();
  await page.getByText('Could not add the number').waitFor();
  t.equal(
    await form.getByLabel('Phone number (E.164)').getAttribute('aria-invalid'),
    'true',
    'a number that is not E.164 is refused, naming the field',
  );

  await form.getByLabel('Phone number (E.164)').fill('+15550142777');
  await form.getByLabel('Carrier auth token').fill(AUTH_TOKEN);
  await form.getByRole('button', { name: 'Add number' }).click();
  const added = page.getByRole('region', { name: 'Number added' });
  await added.waitFor();
  const voiceUrl = await added.getByLabel('Voice URL').textContent();
  t.equal(voiceUrl, `${app.url}/api/v1/telephony/twilio/voice`, 'the voice URL to paste is shown');
  const row = page.getByRole('row', { name: /\+15550142777/ });
  await row.waitFor();
  t.match(await row.textContent(), /Voice helper/, "the number's assistant is named");
  t.equal(await form.getByLabel('Carrier auth token').inputValue(), '', 'the token field is emptied');
  t.notOk((await page.content()).includes(AUTH_TOKEN), 'the auth token is nowhere on the page');

  // A carrier calls the number; the call lands in the assistant's conversations as a phone call.
  const answer = await callWebhook(app, callParams('+15550142777', '+15550100321'));
  const stream = streamOfTwiml(answer.text)!;
  const carrier = await openCarrierStream(stream.url, stream.token);
  for (const frame of [...mulawSpeech(40), ...mulawSilence(40)]) carrier.media(frame);
  await waitFor(() => carrier.heardBytes() > 0, 'the assistant to answer');
  carrier.send({ event: 'stop', streamSid: carrier.stream.streamSid });
  await carrier.closed;
  await waitFor(async () => {
    const [r] = await app.database.sql`select state from voice_sessions where id = ${stream.sessionId}`;
    return r?.['state'] === 'ended';
  }, 'the call to be settled');
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/conversations`);
  const call = page.getByRole('row', { name: /Phone \(1\)/ });
  await call.waitFor();
  t.match(await call.textContent(), /Phone caller.*\+1 555 ••• 0321/, 'marked as a phone call, the caller masked');
  t.notOk((await page.content()).includes('5550100321'), "the caller's whole number is not on the page");

  await page.goto(`${app.url}/dashboard/phone-numbers`);
  await page.getByRole('button', { name: 'Delete +15550142777' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('No phone numbers yet.').waitFor();
  const left = await app.database.sql`select 1 from phone_numbers where account_id = ${owner.accountId}`;
  t.equal(left.length, 0, 'the number is deleted');
  // The answers the page expected (401 before signing in, 400 for the refused number) are logged; nothing else is.
  t.same(
    browser.errors.filter((e) => !e.startsWith('[console] Failed to load resource')),
    [],
    'no page errors',
  );
});

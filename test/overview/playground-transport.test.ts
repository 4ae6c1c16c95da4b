/**
 * The playground never tries a transport the server's voice lacks: with the local voice (WebSocket relay only) the
 * dashboard's config says so, the playground's widget goes straight to the relay, and no WebRTC mint is refused.
 */
import t from 'tap';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, makeSpeechWav, signInToDashboard } from '../helpers/browser.js';
import { bearer } from '../helpers/identity.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';

await ensureDashboardBuilt();
await buildWidget();

t.test('the local voice: the playground calls over the relay at once, no refused WebRTC mint', async (t) => {
  const app = await startTestApp(t, { env: { VOICE_PROVIDER: 'local' } });
  const config = (await (await fetch(`${app.url}/api/dashboard/config`)).json()) as { voiceTransports: string[] };
  t.same(config.voiceTransports, ['websocket'], 'the dashboard is told the voice takes the relay only');

  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const wav = await makeSpeechWav(t, 'Hello there.');
  const browser = await launchBrowser(t, { fakeAudioWav: wav });
  const page = await browser.newPage();
  page.setDefaultTimeout(20_000);
  await signInToDashboard(page, app.url, owner);
  const errorsBefore = browser.errors.length;
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.publicId)}/playground`);
  await page.getByRole('button', { name: 'Start voice call' }).click();
  t.equal(await page.locator('parley-assistant').getAttribute('transport'), 'websocket');

  // The call's transport is in its timeline row, written every few seconds: ask the call log a few times a second
  // (not faster: the key's rate limit counts these too).
  const call = await waitFor(
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const res = await fetch(`${app.url}/api/v1/call-log?source=playground`, { headers: bearer(owner.secret) });
      if (res.status !== 200) return undefined; // a busy machine's bounded refusal: ask again
      const body = (await res.json()) as { calls: Array<{ transport: string | null; state: string }> };
      return body.calls.find((c) => c.transport !== null);
    },
    'the playground call in the call log',
    30_000,
  );
  t.match(call, { transport: 'websocket', state: 'active' });
  await page.getByRole('button', { name: 'End call' }).click();
  t.same(browser.errors.slice(errorsBefore), [], 'no refused mint (no 400) and no page error');
});

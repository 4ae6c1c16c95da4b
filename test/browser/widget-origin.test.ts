/**
 * <parley-assistant> in Debian's Chromium on a page whose origin the assistant does not allow: the visitor reads a
 * neutral line (no plan, billing or usage) and finds the message box, Send and the call button off; the browser
 * console tells the site's owner which origin to add to the assistant's allowed domains.
 */
import t from 'tap';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { ownerWithVoice, voiceAssistant } from '../voice/helpers.js';
import { events, hostSite, openHost, until } from './host-site.js';

await buildWidget();

t.test(
  'a page whose origin is not allowed: neutral for the visitor, controls off, a way forward for the owner',
  async (t) => {
    const app = await startTestApp(t);
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner, { settings: { allowedDomains: ['https://shop.example'] } });
    const stranger = await hostSite(t, app.url);
    const browser = await launchBrowser(t);

    const page = await openHost(browser, stranger.url(assistant.publicId));
    await until(page, `window.__parley.some((e) => e.type === 'parley:error')`, 'parley:error', 15_000);
    const [error] = await events(page, 'parley:error');
    t.equal(error.code, 'WIDGET_ORIGIN_NOT_ALLOWED');
    const notice = page.getByText('This assistant is not available on this site.');
    t.ok(await notice.first().isVisible(), 'the visitor reads a neutral line');
    const visible = await page.locator('parley-assistant').innerText();
    t.notMatch(visible, /plan|billing|usage|upgrade|limit|allowed domains|dashboard/i, 'nothing meant for the owner');

    const input = page.getByRole('textbox', { name: 'Message' });
    const send = page.getByRole('button', { name: 'Send' });
    const call = page.getByRole('button', { name: 'Start voice call' });
    t.ok(await input.isDisabled(), 'the message box is off');
    t.ok(await send.isDisabled(), 'Send is off');
    t.ok(await call.isDisabled(), 'the call button is off');
    t.equal(app.app.voice.sessions.size, 0, 'no voice session was started');

    const console = browser.errors.filter((e) => e.startsWith('[console] Parley:'));
    t.equal(console.length, 1, 'one console line for the site owner');
    t.match(console[0], stranger.origin, 'it names the origin to allow');
    t.match(console[0], /allowed domains/, 'and where to add it');
    await page.close();
  },
);

import t from 'tap';
import type { ServerResponse } from 'node:http';
import { buildWidget } from '../../web/widget/build.js';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { api, orderStatusTool, startToolReceiver } from '../tools/helpers.js';
import { ownerWithVoice, voiceAssistant, waitFor } from '../voice/helpers.js';
import { hostSite, openHost, until } from './host-site.js';

/**
 * The widget shows a tool's progress in chat (the SSE `tool` events): "Checking your order..." while the owner's
 * server works, gone once the answer with the result is there. Chat through the local answer engine (no model).
 */
t.test("the widget in Chromium shows a tool's progress, then the answer with its result", async (t) => {
  await buildWidget();
  const app = await startTestApp(t, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CHAT_PROVIDER: 'local' } });
  const receiver = await startToolReceiver(t);
  const held: ServerResponse[] = [];
  receiver.respond = (_req, res) => void held.push(res);
  t.teardown(() => held.forEach((res) => res.destroy()));
  const host = await hostSite(t, app.url);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { settings: { allowedDomains: [host.origin] } });
  const created = await api(
    app.url,
    'POST',
    `/api/v1/assistants/${assistant.publicId}/tools`,
    owner.secret,
    orderStatusTool(receiver.url),
  );
  t.equal(created.status, 201, created.text);
  const browser = await launchBrowser(t);
  const page = await openHost(browser, host.url(assistant.publicId));
  await page.getByRole('textbox', { name: 'Message' }).fill('What is the status of order 12345?');
  await page.getByRole('button', { name: 'Send' }).click();

  await waitFor(() => held.length === 1, "the owner's server asked");
  const progress = `(() => { const root = document.querySelector('parley-assistant').shadowRoot; const s = root && root.querySelector('.tool'); return s ? s.textContent : ''; })()`;
  t.equal(await until(page, progress, 'the progress line'), 'Checking your order...', 'the start message is shown');
  held[0]!.writeHead(200, { 'content-type': 'application/json' });
  held[0]!.end(JSON.stringify({ result: { status: 'shipped' } }));
  await until(
    page,
    `(() => { const root = document.querySelector('parley-assistant').shadowRoot; return [...root.querySelectorAll('.msg.assistant')].some((m) => m.textContent.includes('shipped')); })()`,
    'the answer with the result',
  );
  t.equal(await page.evaluate(progress), '', 'the progress line is gone');
});

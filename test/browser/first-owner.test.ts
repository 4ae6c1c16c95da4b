/**
 * A fresh server's sign-in page, in Debian's Chromium: while no owner exists it names the command that creates the
 * first one (the same command the start-up line prints), and once an owner exists it says nothing of it.
 */
import t from 'tap';
import { CREATE_OWNER_COMMAND } from '../../src/admin/index.js';
import { launchBrowser } from '../helpers/browser.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

await ensureDashboardBuilt();

t.test('the sign-in page of a server without an owner says how to create the first one', async (t) => {
  const app = await startTestApp(t);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);

  await page.goto(`${app.url}/dashboard/sign-in`);
  const hint = page.getByRole('note', { name: 'First owner' });
  await hint.waitFor();
  t.match(await hint.innerText(), 'No owner yet', 'the hint says why');
  t.equal(await hint.locator('code').innerText(), CREATE_OWNER_COMMAND, 'it names the exact command');

  const owner = await createOwner(app.deps.sql, { email: `first-${Date.now()}@example.test` });
  const config = page.waitForResponse((r) => r.url().endsWith('/api/dashboard/config'));
  await page.reload();
  t.equal(
    ((await (await config).json()) as { createOwner: unknown }).createOwner,
    null,
    'the server knows of an owner',
  );
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  // The app renders what the config answer said on its next frame: let that frame pass before looking for the hint.
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
  t.equal(await hint.count(), 0, 'no hint once an owner exists');
  t.same(
    browser.errors.filter((e) => !/status of 401/.test(e)),
    [],
    'no page errors',
  );
});

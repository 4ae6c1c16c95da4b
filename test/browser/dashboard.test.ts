/**
 * The owner dashboard in Debian's Chromium against the whole service (real Postgres and Redis): sign-in, assistants,
 * documents, the playground, API keys, usage, admin, session expiry and the 375 px layout; plus how /dashboard is
 * served (cache, CSP, fallback, 404) and the size budget of its JavaScript.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { ensureDashboardBuilt } from './dashboard-build.js';

const dist = await ensureDashboardBuilt();
const database = await createTestDatabase(t);
const owner = await createOwner(database.sql, { email: `owner-${Date.now()}@example.test` });
const operator = await createOwner(database.sql, { email: `operator-${Date.now()}@example.test` });
// Not self-hosted, so the plan gates of a server without billing are visible (the evals tab below).
const { url } = await startTestApp(t, { database, env: { ADMIN_USER_IDS: operator.userId, SELF_HOSTED: 'false' } });
const browser = await launchBrowser(t);
const page = await browser.newPage();
page.setDefaultTimeout(15_000);
const screenshots = process.env['DASHBOARD_SCREENSHOTS'];

/** README screenshots, only when DASHBOARD_SCREENSHOTS names a folder (see web/dashboard/README.md). */
async function shoot(name: string, fullPage = false): Promise<void> {
  if (screenshots) await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage });
}

async function signIn(p: Page, email: string, password: string): Promise<void> {
  await p.getByLabel('Email').fill(email);
  await p.getByLabel('Password').fill(password);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

/** Widest element edge beyond the viewport: 0 when nothing scrolls sideways. */
const overflowX = (p: Page) =>
  p.evaluate('document.documentElement.scrollWidth - window.innerWidth') as Promise<number>;

t.test(
  'serving: index no-cache with a strict CSP, hashed assets immutable, client routes fall back, missing files 404',
  async (t) => {
    const index = await fetch(`${url}/dashboard`);
    t.equal(index.status, 200);
    t.match(index.headers.get('content-type'), /^text\/html/);
    t.equal(index.headers.get('cache-control'), 'no-cache');
    const csp = index.headers.get('content-security-policy') ?? '';
    t.match(csp, /script-src 'self'(;|$)/, 'scripts only from this origin');
    t.notMatch(csp, /unsafe-inline|unsafe-eval/, 'nothing inline, no eval');
    t.match(csp, /frame-ancestors 'none'/);
    const html = await index.text();
    t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script in the page');
    const asset = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    t.ok(asset, 'the page loads a hashed script');

    const js = await fetch(`${url}${asset}`, { headers: { 'accept-encoding': 'gzip' } });
    t.equal(js.status, 200);
    t.match(js.headers.get('content-type'), /^text\/javascript/);
    t.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    t.equal(js.headers.get('content-encoding'), 'gzip');

    const etag = index.headers.get('etag')!;
    const again = await fetch(`${url}/dashboard/`, { headers: { 'if-none-match': etag } });
    t.equal(again.status, 304, 'the index revalidates with its ETag');

    const deep = await fetch(`${url}/dashboard/assistants/asst_x/documents`);
    t.equal(deep.status, 200, 'a client route gets the index');
    t.equal(await deep.text(), html);

    for (const missing of ['/dashboard/assets/index-deadbeef.js', '/dashboard/nope.css', '/dashboard/assets/']) {
      const res = await fetch(`${url}${missing}`);
      t.equal(res.status, 404, `${missing} is 404, not the index`);
      t.equal(((await res.json()) as { code: string }).code, 'DASHBOARD_ASSET_NOT_FOUND');
    }
    const config = (await (await fetch(`${url}/api/dashboard/config`)).json()) as {
      signupEnabled: boolean;
      widgetScript: string | null;
    };
    t.equal(config.signupEnabled, false, 'sign-up is off unless SIGNUP_ENABLED');
    const widget = await fetch(`${url}/widget/v1/parley.js`);
    t.equal(
      config.widgetScript,
      widget.status === 404 ? null : '/widget/v1/parley.js',
      'the widget script is offered exactly when the server routes it',
    );
  },
);

t.test('the JavaScript the dashboard ships is under 150 KB gzipped', async (t) => {
  const files = readdirSync(join(dist, 'assets')).filter((f) => f.endsWith('.js'));
  const gz = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(dist, 'assets', f)), { level: 9 }).length, 0);
  t.comment(`dashboard JS: ${files.length} file(s), ${(gz / 1024).toFixed(1)} KB gzipped`);
  t.ok(files.length > 0);
  t.ok(gz < 150 * 1024, `gzipped JS ${gz} bytes < 150 KB`);
});

t.test('owner REST routes take the dashboard session; a cross-site mutation with it is refused', async (t) => {
  const cookie = await login(url, owner.email, owner.password);
  t.equal(
    (await fetch(`${url}/api/v1/assistants`, { headers: { cookie } })).status,
    200,
    'the session reads like a key',
  );
  t.equal((await fetch(`${url}/api/v1/assistants`)).status, 401, 'nothing sent: 401');
  const crossSite = await fetch(`${url}/api/v1/assistants`, {
    method: 'POST',
    headers: { ...dashboardHeaders(url, cookie), origin: 'https://evil.example' },
    body: JSON.stringify({ name: 'csrf' }),
  });
  t.equal(crossSite.status, 403, 'CSRF: another origin cannot use the cookie');
});

t.test('sign-in: a wrong password shows the server error, the right one returns to the page asked for', async (t) => {
  await page.goto(`${url}/dashboard/usage`);
  await page.waitForURL(/\/dashboard\/sign-in\?next=%2Fusage/);
  await shoot('sign-in');
  await signIn(page, owner.email, 'not the password');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.innerText(), /Could not sign in/);
  t.match(await alert.innerText(), /Request id/, 'the request id is shown to quote');
  await signIn(page, owner.email, owner.password);
  await page.waitForURL(/\/dashboard\/usage$/);
  t.pass('back on the page asked for');
});

t.test('usage shows the free plan: $1.00 budget and 10 voice minutes', async (t) => {
  await page.getByRole('heading', { name: /Current period/ }).waitFor();
  const stats = await page.locator('dl.stats').innerText();
  t.match(stats, /Budget limit\s+\$1\.00/);
  t.match(stats, /Budget remaining\s+\$1\.00/);
  t.match(stats, /Requests\s+0 \/ 75/);
  t.match(stats, /Voice minutes used\s+0 \/ 10/);
  t.match(await page.locator('main').innerText(), /Plan free/);
  t.equal(await page.locator('figure.chart svg').count(), 3, 'forecast, daily spend and voice charts');
});

t.test('an owner sees no admin link, and a forced /admin shows the API refusal', async (t) => {
  const nav = page.getByRole('navigation', { name: 'Main' });
  t.equal(await nav.getByRole('link', { name: 'Admin' }).count(), 0);
  await page.goto(`${url}/dashboard/admin`);
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.innerText(), /Could not load/);
  t.match(await alert.innerText(), /AUTH_NOT_ADMIN|403|operator|admin/i);
});

let assistantUrl = '';
t.test('create an assistant: its public id and embed snippet are shown', async (t) => {
  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Assistants' }).click();
  await page.getByRole('heading', { name: 'Assistants', level: 1 }).waitFor();
  await page.getByText('No assistants yet').waitFor();
  await page.getByRole('button', { name: 'New assistant' }).click();
  await page.getByLabel('Name').fill('Returns helper');
  await page.getByRole('button', { name: 'Create assistant' }).click();
  await page.getByRole('heading', { name: 'Returns helper', level: 1 }).waitFor();
  assistantUrl = page.url();
  t.match(assistantUrl, /\/dashboard\/assistants\/asst_[0-9A-Za-z]+$/, 'the URL names the assistant by its asst_ id');
  const embed = await page.getByLabel('Widget embed snippet').innerText();
  t.match(embed, /<parley-assistant assistant-id="asst_[0-9A-Za-z]+">/);
  t.match(embed, /\/widget\/v1\/parley\.js/);
  await nav.getByRole('link', { name: 'Assistants' }).click();
  await page.getByRole('link', { name: 'Returns helper', exact: true }).waitFor();
  await shoot('assistants');
});

t.test('upload a Markdown document and watch it become ready', async (t) => {
  await page.goto(`${assistantUrl}/documents`);
  await page.getByLabel('Choose files to upload').setInputFiles({
    name: 'returns.md',
    mimeType: 'text/markdown',
    buffer: Buffer.from(
      '# Returns\n\nYou can return any unworn item within 45 days of delivery for a full refund.\n\nShipping is free over 30 euros.\n',
    ),
  });
  await page.getByRole('listitem', { name: 'returns.md: ready' }).waitFor({ timeout: 30_000 });
  t.pass('the document reached ready without a reload');
});

t.test('the playground answers from the document and shows its source', async (t) => {
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByLabel('Message').fill('Within how many days can I return an item?');
  await page.getByRole('button', { name: 'Send' }).click();
  const sources = page.getByText('Sources (1)');
  await sources.waitFor();
  const transcript = await page.getByLabel('Playground conversation').innerText();
  t.match(transcript, /within 45 days of delivery/, 'the answer quotes the document');
  t.match(transcript, /returns\.md/, 'the source is named');
  await shoot('playground');
});

t.test('sources by drag-and-drop and text; conversations, transcript, analytics and the evals plan gate', async (t) => {
  await page.goto(`${assistantUrl}/documents`);
  const drop = await page.evaluateHandle(
    `(() => { const d = new DataTransfer(); d.items.add(new File(['Opening hours: nine to five on weekdays.'], 'hours.txt', { type: 'text/plain' })); return d; })()`,
  );
  await page.dispatchEvent('.dropzone', 'drop', { dataTransfer: drop });
  await page.getByRole('listitem', { name: 'hours.txt: ready' }).waitFor({ timeout: 30_000 });
  await page.getByLabel('Text', { exact: true }).check();
  await page.getByLabel('Source name').fill('Shipping note');
  await page.getByRole('textbox', { name: 'Text' }).fill('Parcels leave the warehouse within two working days.');
  await page.getByRole('button', { name: 'Add source' }).click();
  await page.getByRole('listitem', { name: 'Shipping note: ready' }).waitFor({ timeout: 30_000 });
  t.pass('a dropped file and a text source both became ready');

  await page.getByRole('link', { name: 'Conversations', exact: true }).click();
  await page.getByRole('cell', { name: 'playground' }).waitFor();
  await page
    .getByRole('link', { name: /\d{4}|AM|PM/ })
    .first()
    .click();
  await page.getByRole('heading', { name: 'Transcript' }).waitFor();
  t.match(
    await page.locator('.transcript').innerText(),
    /Within how many days can I return an item\?/,
    'the playground turn is in the transcript',
  );

  await page.getByRole('link', { name: 'Analytics' }).click();
  await page.getByText('Messages per day').waitFor();
  t.match(await page.locator('dl.stats').innerText(), /Conversations\s+1/);

  await page.getByRole('link', { name: 'Evals' }).click();
  await page.getByText('Evals are not part of the free plan.').waitFor();
  // No billing here (and SELF_HOSTED=false): no link to a billing page that says billing is not set up.
  t.match(
    await page.locator('.upgrade').innerText(),
    /an operator changes an account.s plan in Admin.*admin:grant.*SELF_HOSTED=true/s,
    'owners are told how an operator unlocks evals',
  );
  t.equal(await page.getByRole('link', { name: 'See plans and upgrade' }).count(), 0);
});

t.test('settings: security policy and voice are saved as the server stores them', async (t) => {
  await page.goto(assistantUrl);
  await page.getByLabel(/Allowed domains/).fill('https://shop.example');
  await page.getByLabel('Voice enabled').check();
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  await page.reload();
  t.equal(await page.getByLabel(/Allowed domains/).inputValue(), 'https://shop.example');
  t.ok(await page.getByLabel('Voice enabled').isChecked(), 'voice stays on after a reload');
  const bad = page.getByLabel(/Allowed domains/);
  await bad.fill('not an origin');
  await page.getByRole('button', { name: 'Save settings' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.match(await alert.innerText(), /VALIDATION_FAILED/, 'a refused value shows the server error and code');
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('button', { name: 'Start voice call' }).waitFor();
  t.equal(
    await page.locator('parley-assistant').getAttribute('source'),
    'playground',
    'voice is on: the playground offers a call through the widget (dashboard-voice.test.ts places one)',
  );
});

t.test('an API key: created with scopes, secret shown once, gone after reload, still listed', async (t) => {
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Key name').fill('ci server');
  await page.getByRole('checkbox', { name: 'chat', exact: true }).check();
  await page.getByRole('checkbox', { name: 'assistants:read' }).check();
  t.equal(await page.getByRole('checkbox').count(), 10, 'the ten scopes (webhooks and conversations:write among them)');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secretBox = page.getByLabel('API key secret');
  await secretBox.waitFor();
  const secret = (await secretBox.innerText()).trim();
  t.match(secret, /^sk_live_/);
  t.match(await page.getByRole('region', { name: 'New key secret' }).innerText(), /only time the secret is shown/);
  t.ok(await page.getByRole('button', { name: 'Copy secret' }).isVisible());
  await shoot('keys');
  const res = await fetch(`${url}/api/v1/assistants`, { headers: bearer(secret) });
  t.equal(res.status, 200, 'the secret works');
  await page.reload();
  await page.getByRole('cell', { name: 'ci server', exact: true }).waitFor();
  t.notMatch(await page.locator('main').innerText(), new RegExp(secret), 'the secret is not shown again');
  t.equal(await page.getByLabel('API key secret').count(), 0);
});

t.test('an expired session sends the owner to sign-in and back', async (t) => {
  const cookie = (await page.context().cookies()).find((c) => c.name === 'parley_session');
  t.ok(cookie);
  await fetch(`${url}/api/auth/logout`, {
    method: 'POST',
    headers: dashboardHeaders(url, `parley_session=${cookie!.value}`),
    body: '{}',
  });
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.waitForURL(/\/dashboard\/sign-in\?next=%2Fusage&expired=1/);
  await page.getByText('Your session ended').waitFor();
  await signIn(page, owner.email, owner.password);
  await page.waitForURL(/\/dashboard\/usage$/);
  await page.getByRole('heading', { name: /Current period/ }).waitFor();
  t.pass('signed in again and back on Usage');
  await shoot('usage', true);
});

t.test('at 375 px nothing scrolls sideways and the menu opens', async (t) => {
  await page.setViewportSize({ width: 375, height: 760 });
  for (const path of [
    '/overview',
    '/calls',
    '/usage',
    '/keys',
    '/assistants',
    assistantUrl.slice(assistantUrl.indexOf('/dashboard') + '/dashboard'.length),
  ]) {
    await page.goto(`${url}/dashboard${path}`);
    await page.locator('main h1').waitFor();
    if (path === '/keys') await shoot('keys-375px');
    t.equal(await overflowX(page), 0, `${path} fits 375 px`);
  }
  await page.getByRole('button', { name: 'Menu' }).click();
  await page.getByRole('link', { name: 'Billing' }).click();
  await page.getByRole('heading', { name: 'Billing', level: 1 }).waitFor();
  await page.getByText('Billing is not set up on this server').waitFor();
  t.pass('billing explains the missing provider (503)');
  await page.setViewportSize({ width: 1280, height: 800 });
});

t.test(
  'an operator signs in by keyboard, sees the admin link, the accounts, grants credit and reads the audit log',
  async (t) => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in$/);
    // Keyboard only: the heading has focus, Tab reaches Email then Password, Enter submits.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The page moves focus to its heading once rendered; typing before that would go nowhere.
    await page.waitForFunction("document.activeElement !== null && document.activeElement.tagName === 'H1'");
    await page.keyboard.press('Tab');
    await page.keyboard.type(operator.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(operator.password);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Admin' }).focus();
    await page.keyboard.press('Enter');
    const accounts = page.getByRole('list', { name: 'Accounts' });
    await accounts.waitFor();
    const text = await accounts.innerText();
    t.match(text, new RegExp(owner.email.replace(/[.]/g, '\\.')), "the owner's account is listed");
    t.match(text, /free/);
    const ownerCard = page.getByRole('listitem', { name: `Account ${owner.email}` });
    await ownerCard.getByLabel('Credit in dollars').fill('2.50');
    await ownerCard.getByRole('button', { name: 'Grant credit' }).click();
    await ownerCard.getByText('Credit granted (audit-logged).').waitFor();
    t.match(await ownerCard.locator('dl.stats').innerText(), /Credit\s+\$2\.50/, 'the server answer shows the credit');
    const audit = page.getByRole('table', { name: 'Audit log' });
    await audit.getByRole('cell', { name: 'hosting_account.credit_granted' }).waitFor();
    t.match(await audit.innerText(), new RegExp(owner.accountId), 'the audit row names the account');
    await ownerCard.getByRole('combobox', { name: /^Plan/ }).selectOption('pro');
    await ownerCard.getByRole('button', { name: 'Save changes' }).click();
    await ownerCard.getByText('Saved (audit-logged).').waitFor();
    t.match(
      await ownerCard.locator('dl.stats').innerText(),
      /Plan\s+pro/,
      'the plan change is what the server now says',
    );
    await audit.getByRole('cell', { name: 'hosting_account.updated' }).waitFor();
    await shoot('admin');
  },
);

t.test('sign-up, on a server with SIGNUP_ENABLED, creates the account and signs it in', async (t) => {
  const open = await startTestApp(t, { database, env: { SIGNUP_ENABLED: 'true' } });
  // Cookies are per host, not port: drop the operator's session so this server shows its sign-in page.
  await browser.context.clearCookies();
  const p = await browser.newPage();
  await p.goto(`${open.url}/dashboard/sign-in`);
  await p.getByRole('link', { name: 'Create an account' }).click();
  await p.getByRole('heading', { name: 'Create your account' }).waitFor();
  await p.getByLabel('Name').fill('New Owner');
  await p.getByLabel('Email').fill(`new-${Date.now()}@example.test`);
  await p.getByLabel('Password').fill('a long enough new password');
  await p.getByRole('button', { name: 'Create account' }).click();
  await p.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  t.pass('signed up and in, on the overview');
  await p.close();
});

t.test('no uncaught errors in the page (failed requests the tests caused on purpose aside)', async (t) => {
  const unexpected = browser.errors.filter(
    (e) => !/Failed to load resource: the server responded with a status of (400|401|403|503)/.test(e),
  );
  t.same(unexpected, []);
});

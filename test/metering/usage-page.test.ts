/**
 * The usage page in Debian's Chromium against the whole service: an owner whose spend crossed two thresholds sees
 * the banner, the forecast chart with a sentence saying when the money runs out, a daily chart whose total is the
 * budget used, and sets a hard limit in the budget form. With DASHBOARD_SCREENSHOTS=<folder> it writes
 * usage-budget.png there (the README's "Usage and budgets" picture).
 */
import { join } from 'node:path';
import t from 'tap';
import { Meter } from '../../src/metering/index.js';
import { launchBrowser } from '../helpers/browser.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';

await ensureDashboardBuilt();
const app = await startTestApp(t, { env: { HOSTED_USAGE_ENFORCEMENT: 'enforce' } });
const { sql } = app.database;
const owner = await createOwner(sql);
const meter = new Meter({ sql, config: app.config, log: captureLogger().log });
for (const [kind, source, micros] of [
  ['chat', 'api', 420_000],
  ['chat', 'widget', 310_000],
  ['ingestion', 'dashboard', 120_000],
] as const) {
  const r = await meter.admit({
    accountId: owner.accountId,
    kind,
    source,
    audience: 'owner',
    estimateMicros: micros,
    assistantId: 'asst_page',
  });
  await meter.settle(r, { actualMicros: micros });
}
const browser = await launchBrowser(t);
const page = await browser.newPage();
page.setDefaultTimeout(15_000);

t.test('banner, forecast in words and as a chart, daily total, and the budget form', async (t) => {
  await page.goto(`${app.url}/dashboard/usage`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: /Current period/ }).waitFor();

  const banner = page.locator('.budget-banner');
  t.match(await banner.innerText(), /80% of this period’s budget used\.\s+\$0\.85 of \$1\.00 spent/);
  // The sentence says what the forecast route says (whether the money lasts depends on today's date in the period).
  const forecast = (await page.evaluate(async () => (await fetch('/api/v1/account/usage/forecast')).json())) as {
    forecast: { projectedExhaustionAt: string | null; projectedMicros: number };
  };
  const sentence = await page.locator('.forecast-sentence').innerText();
  if (forecast.forecast.projectedExhaustionAt === null) t.match(sentence, /the budget of \$1\.00 lasts until/);
  else t.match(sentence, /budget of \$1\.00 (runs out on|is used up)/);
  t.equal(await page.locator('figure.forecast-chart svg polyline').count(), 2, 'spent and projection');
  t.equal(await page.locator('figure.forecast-chart svg line.budget-line').count(), 1, 'the budget line');
  t.match(await page.locator('section[aria-labelledby="daily-h"]').innerText(), /\$0\.85 in all/);

  const form = page.getByRole('form', { name: 'Budget settings' });
  await form.getByLabel(/Hard limit in dollars/).fill('2');
  await form.getByRole('button', { name: 'Save' }).click();
  t.match(await form.getByRole('alert').innerText(), /BUDGET_HARD_LIMIT_ABOVE_BUDGET|hardLimitMicros/);
  await form.getByLabel(/Alert at these percentages/).fill('25, 50, 90');
  await form.getByLabel(/Hard limit in dollars/).fill('0.9');
  await form.getByRole('button', { name: 'Save' }).click();
  await form.getByRole('status').waitFor();
  t.match(await form.innerText(), /budget is \$0\.90, set by your hard limit/);
  const [row] = await sql<[{ budgetHardLimitMicros: number; budgetAlertThresholds: number[] }]>`
    select budget_hard_limit_micros, budget_alert_thresholds from hosting_accounts where account_id = ${owner.accountId}`;
  t.same([Number(row!.budgetHardLimitMicros), row!.budgetAlertThresholds], [900_000, [25, 50, 90]]);
  t.match(await banner.innerText(), /90% of this period’s budget used/, 'the lowered limit crossed 90 % at once');

  const folder = process.env['DASHBOARD_SCREENSHOTS'];
  if (folder) await page.screenshot({ path: join(folder, 'usage-budget.png'), fullPage: true });
});

/**
 * The dashboard's Tests tab, in Debian's Chromium: the owner writes scenarios in the form (or as JSON, where a
 * malformed one is refused naming the field), runs them, and sees each verdict with its evidence and latency, the
 * transcript, a voice result's recording and call timeline, and the run in the history.
 */
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser, signInToDashboard } from '../helpers/browser.js';
import { createOwner } from '../helpers/identity.js';
import { addReadyTextDocument } from '../providers/voice/local-helpers.js';
import { ensureDashboardBuilt } from '../browser/dashboard-build.js';
import { orderStatusTool } from '../tools/helpers.js';
import { ownerWithVoice, voiceAssistant } from '../voice/helpers.js';
import { api, DOCUMENT } from './helpers.js';

await ensureDashboardBuilt();

t.test('write a scenario, run it, read the verdict with its evidence and the transcript', async (t) => {
  const app = await startTestApp(t, { env: { CHAT_PROVIDER: 'local' } });
  const owner = await createOwner(app.database.sql);
  const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Notes' });
  const assistant = made.body.assistant;
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);

  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  await signInToDashboard(page, app.url, owner);
  await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/tests`);
  await page.getByRole('heading', { name: 'Tests' }).waitFor();
  await page.getByText('No scenarios yet: write one below.').waitFor();

  await page.getByRole('button', { name: 'JSON (advanced)' }).click();
  const editor = page.getByLabel(/New scenario/);
  await editor.fill(JSON.stringify({ name: 'bad', transport: 'chat', turns: [], expect: [{ mustSay: 'x' }] }));
  await page.getByRole('button', { name: 'Save scenario' }).click();
  await page.getByText('Could not save the scenario').waitFor();
  t.match(await page.locator('.error, [role=alert]').first().textContent(), /turns/, 'the refusal names the field');

  await editor.fill(
    JSON.stringify({
      name: 'price',
      transport: 'chat',
      turns: [{ say: 'How much does the premium plan cost?' }],
      expect: [{ mustSay: '4.99 euros' }],
    }),
  );
  await page.getByRole('button', { name: 'Save scenario' }).click();
  await page.getByRole('row', { name: /price chat 1 mustSay/ }).waitFor();

  await page.getByRole('button', { name: 'Run all scenarios' }).click();
  await page.getByText(/1 of 1 scenarios · pass rate 100 %/).waitFor();
  await page.getByText('price (chat)').click();
  await page.getByRole('cell', { name: /said "4\.99 euros" in:/ }).waitFor();
  t.match(
    await page.locator('ol.transcript').textContent(),
    /caller: How much does the premium plan cost\?.*assistant: .*4\.99 euros per month/s,
    'the transcript is shown',
  );
  t.match(
    await page.getByRole('link', { name: 'Open the conversation' }).getAttribute('href'),
    /\/dashboard\/assistants\/.+\/conversations\/conv_/,
    'the result links to its conversation (timeline, recording)',
  );
  await page
    .getByRole('row', { name: /price chat 1 mustSay/ })
    .getByRole('button', { name: 'History' })
    .click();
  await page
    .getByRole('table', { name: 'History of price' })
    .getByRole('row', { name: /passed/ })
    .waitFor();
  await page
    .getByRole('table', { name: 'Runs' })
    .getByRole('row', { name: /done 1 100 %/ })
    .waitFor();
});

t.test(
  'write a fact, a refusal and a tool scenario in the form, run them, see verdicts with evidence and latency; a voice result plays its recording and shows its timeline',
  async (t) => {
    // The tool's URL is never called (the mock answers): a loopback one is allowed here.
    const app = await startTestApp(t, { env: { CHAT_PROVIDER: 'local', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: false } });
    t.equal(await addReadyTextDocument(app.url, owner.secret, assistant.publicId, 'Plans', DOCUMENT), 201);
    const tool = await api(app.url, 'POST', `/api/v1/assistants/${assistant.id}/tools`, owner.secret, {
      ...orderStatusTool('http://127.0.0.1:9/never-called'),
    });
    t.equal(tool.status, 201, tool.text);

    const browser = await launchBrowser(t);
    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    await signInToDashboard(page, app.url, owner);
    await page.goto(`${app.url}/dashboard/assistants/${encodeURIComponent(assistant.id)}/tests`);
    await page.getByRole('heading', { name: 'Tests' }).waitFor();
    await page.getByText('No scenarios yet: write one below.').waitFor();

    const field = (label: string) => page.getByLabel(label, { exact: true });
    const write = async (scenario: {
      name: string;
      transport?: string;
      say: string;
      expect: Array<{ kind: string; value: string; args?: string }>;
      mock?: { tool: string; result: string };
    }) => {
      await field('Scenario name').fill(scenario.name);
      if (scenario.transport) await field('Transport').selectOption(scenario.transport);
      await field('Turn 1').selectOption('say');
      await field('Turn 1 words').fill(scenario.say);
      for (let i = 0; i < scenario.expect.length; i++) {
        const e = scenario.expect[i]!;
        if (i > 0) await page.getByRole('button', { name: 'Add expectation' }).click();
        await field(`Expectation ${i + 1}`).selectOption(e.kind);
        await field(`Expectation ${i + 1} value`).fill(e.value);
        if (e.args) await page.getByLabel(`Expectation ${i + 1} arguments`).fill(e.args);
      }
      if (scenario.mock) {
        await page.getByRole('button', { name: 'Add tool mock' }).click();
        await field('Mock 1 tool').fill(scenario.mock.tool);
        await page.getByLabel('Mock 1 result').fill(scenario.mock.result);
      }
      await page.getByRole('button', { name: 'Save scenario' }).click();
      await page
        .getByRole('table', { name: 'Scenarios' })
        .getByRole('row', { name: new RegExp(`^${scenario.name}`) })
        .waitFor();
      t.equal(await field('Scenario name').inputValue(), '', 'the form is blank again once saved');
    };

    await write({
      name: 'fact',
      say: 'How much does the premium plan cost?',
      expect: [
        { kind: 'mustSay', value: '4.99 euros' },
        { kind: 'maxTurnLatencyMs', value: '20000' },
      ],
    });
    // A malformed row is refused in the form, naming it.
    await field('Scenario name').fill('broken');
    await field('Turn 1 words').fill('Hello');
    await field('Expectation 1').selectOption('maxTurnLatencyMs');
    await field('Expectation 1 value').fill('soon');
    await page.getByRole('button', { name: 'Save scenario' }).click();
    await page.getByText('Expectation 1 needs a whole number of milliseconds.').waitFor();
    await page.getByRole('button', { name: 'Remove expectation 1' }).click();
    await page.getByRole('button', { name: 'Add expectation' }).click();

    await write({
      name: 'refusal',
      say: 'How much does the premium plan cost?',
      expect: [{ kind: 'neverSay', value: 'euros per month' }],
    });
    await write({
      name: 'tool',
      say: 'What is the status of order 12345?',
      expect: [
        { kind: 'toolCalled', value: 'order_status', args: '{"orderId":"12345"}' },
        { kind: 'mustSay', value: 'delivered' },
      ],
      mock: { tool: 'order_status', result: '{"status":"delivered"}' },
    });
    await write({
      name: 'voice hello',
      transport: 'websocket',
      say: 'Hello there',
      expect: [{ kind: 'maxTurnLatencyMs', value: '20000' }],
    });
    const scenarios = await api(app.url, 'GET', `/api/v1/assistants/${assistant.id}/scenarios`, owner.secret);
    t.match(scenarios.body.scenarios, [
      {
        name: 'fact',
        transport: 'chat',
        turns: [{ say: 'How much does the premium plan cost?' }],
        expect: [{ mustSay: '4.99 euros' }, { maxTurnLatencyMs: 20000 }],
      },
      { name: 'refusal', expect: [{ neverSay: 'euros per month' }] },
      {
        name: 'tool',
        expect: [{ toolCalled: { name: 'order_status', arguments: { orderId: '12345' } } }, { mustSay: 'delivered' }],
        toolMocks: [{ tool: 'order_status', result: { status: 'delivered' } }],
      },
      { name: 'voice hello', transport: 'websocket' },
    ]);
    t.equal(scenarios.body.scenarios.length, 4, 'the malformed one was not saved');

    await page.getByRole('button', { name: 'Run all scenarios' }).click();
    await page.getByText(/4 of 4 scenarios · pass rate 75 %/).waitFor({ timeout: 90_000 });

    await page.getByText('fact (chat)').click();
    const verdicts = (name: string) => page.getByRole('table', { name: `Verdicts of ${name}` });
    await verdicts('fact')
      .getByRole('row', { name: /pass said "4\.99 euros" in:/ })
      .waitFor();
    await verdicts('fact')
      .getByRole('row', { name: /pass turn latencies \d+ ms/ })
      .waitFor();
    // The refusal failed, so it is open: its evidence quotes what the assistant said.
    await verdicts('refusal')
      .getByRole('row', { name: /FAIL said "euros per month" in:/ })
      .waitFor();
    await page.getByText('tool (chat)').click();
    await verdicts('tool')
      .getByRole('row', { name: /pass called order_status\(\{"orderId":"12345"\}\)/ })
      .waitFor();
    t.match(
      await page.locator('details', { hasText: 'tool (chat)' }).locator('ol.transcript').textContent(),
      /tool: order_status \(mocked\).*"delivered"/s,
      'the mocked tool call is in the transcript',
    );
    t.match(
      await page.locator('details', { hasText: 'fact (chat)' }).textContent(),
      /turn latency \d+ ms/,
      'the result shows its latency',
    );

    await page.getByText('voice hello (websocket)').click();
    const call = page.getByRole('group', { name: 'Call of voice hello' });
    await call.getByRole('figure', { name: 'Timeline of voice hello' }).waitFor();
    t.match(
      await call.locator('figcaption').textContent(),
      /websocket · \d+ events · 1 turn/,
      'the call timeline summary',
    );
    const audio = call.getByLabel('Recording of voice hello');
    await audio.waitFor();
    const src = await audio.getAttribute('src');
    const played = await page.evaluate(async (url) => {
      const res = await fetch(url!, { headers: { range: 'bytes=0-11' } });
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        // latin1: the RIFF size in bytes 4-7 is any byte (UTF-8 would fold a high byte into a replacement character).
        head: new TextDecoder('latin1').decode(await res.arrayBuffer()),
      };
    }, src);
    t.match(
      played,
      { status: 206, type: /audio\/(wav|x-wav)/, head: /^RIFF....WAVE$/s },
      'the recording plays from the page',
    );
    t.match(
      await page.locator('details', { hasText: 'voice hello (websocket)' }).textContent(),
      /turn latency \d+ ms · first audio \d+ ms/,
      'the voice result shows its latency as the caller heard it',
    );
  },
);

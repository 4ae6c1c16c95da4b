import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { reserveVoiceSeconds, settleVoiceSeconds, voiceBudgetAllows } from '../../src/metering/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { balanceOf, createTestMeter, refusalOf } from '../helpers/metering.js';

const { sql } = await createTestDatabase(t);

t.test("scenario calls (source test) never use the plan's voice minutes, but are counted", async (t) => {
  const { accountId } = await createUser(sql, {
    email: `scenario-${Date.now()}@example.test`,
    password: TEST_PASSWORD,
  });
  // Even where playground voice is counted, test calls are not.
  const { meter } = createTestMeter(sql, { config: { VOICE_QUOTA_EXEMPT_PLAYGROUND: false } });
  const grant = await reserveVoiceSeconds(meter, {
    accountId,
    sessionId: 'vs_test_1',
    source: 'test',
    audience: 'owner',
    first: true,
    requestedSeconds: 300,
  });
  t.equal(grant.quotaExempt, true);
  await settleVoiceSeconds(meter, grant, 90);
  const balance = await balanceOf(sql, accountId);
  t.equal(balance?.voiceSecondsUsed, 0, 'no voice minutes used');
  t.equal(balance?.playgroundVoiceSeconds, 90, 'counted beside the playground seconds');
});

t.test('a running scenario call is inside the budget: the hard stop cuts it, as any call', async (t) => {
  const { accountId } = await createUser(sql, {
    email: `scenario-budget-${Date.now()}@example.test`,
    password: TEST_PASSWORD,
  });
  const { meter } = createTestMeter(sql);
  const grantOf = (sessionId: string, source: 'test' | 'playground') =>
    reserveVoiceSeconds(meter, { accountId, sessionId, source, audience: 'owner', first: true, requestedSeconds: 60 });
  const call = await grantOf('vs_test_budget', 'test');
  t.match(call, { quotaExempt: true, budgetExempt: false });
  t.equal(await voiceBudgetAllows(meter, call, 30), true, 'within the budget it goes on');
  // Other spend uses the rest of the $1 budget while the call runs.
  const spend = await meter.admit({ accountId, kind: 'chat', source: 'api', audience: 'owner', estimateMicros: 1 });
  await meter.settle(spend, { actualMicros: 1_000_000 - 30_000 });
  t.equal(await voiceBudgetAllows(meter, call, 30), false, 'its unsettled seconds reach the budget: it is cut');
  await settleVoiceSeconds(meter, call, 30);
  const refused = await refusalOf(grantOf('vs_test_budget_2', 'test'));
  t.match(refused, { status: 402, code: 'USAGE_LIMIT_REACHED', reason: 'usage_limit' }, 'the next one is refused');
  // Exempt owner playground voice stays outside the budget, as before.
  const playground = await grantOf('vs_playground_budget', 'playground');
  t.match(playground, { quotaExempt: true, budgetExempt: true });
  t.equal(await voiceBudgetAllows(meter, playground, 30), true);
  t.equal((await balanceOf(sql, accountId))?.voiceSecondsUsed, 0, 'no voice minutes used');
});

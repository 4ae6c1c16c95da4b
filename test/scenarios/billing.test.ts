import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { reserveVoiceSeconds, settleVoiceSeconds } from '../../src/metering/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { balanceOf, createTestMeter } from '../helpers/metering.js';

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

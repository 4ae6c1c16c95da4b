import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { Meter, reserveVoiceSeconds, settleVoiceSeconds } from '../../src/metering/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';
import { balanceOf, METER_DEFAULTS } from '../helpers/metering.js';

/**
 * Usage shows what really costs money: a minute of the local voice (it runs on this machine) is $0, while the same
 * minute on a hosted provider is priced from the catalog.
 */
const { sql } = await createTestDatabase(t);
let n = 0;
const newAccount = async () =>
  (await createUser(sql, { email: `price-${++n}-${Date.now()}@example.test`, password: TEST_PASSWORD })).accountId;
const meterFor = (voiceSecondMicros?: number) =>
  new Meter({
    sql,
    config: METER_DEFAULTS,
    log: captureLogger().log,
    ...(voiceSecondMicros === undefined ? {} : { voiceSecondMicros }),
  });
const aMinute = async (meter: Meter) => {
  const accountId = await newAccount();
  const grant = await reserveVoiceSeconds(meter, {
    accountId,
    sessionId: `vs_price_${n}`,
    source: 'api',
    audience: 'owner',
    first: true,
  });
  await settleVoiceSeconds(meter, grant, 60);
  return balanceOf(sql, accountId);
};

t.test('a minute of the local voice costs nothing; a hosted one is priced', async (t) => {
  const local = await aMinute(meterFor(0));
  t.match(local, { voiceSecondsUsed: 60, consumedMicros: 0 }, 'the local voice: the seconds count, the cost is $0');
  const hosted = await aMinute(meterFor());
  t.match(hosted, { voiceSecondsUsed: 60, consumedMicros: 60_000 }, 'a hosted provider: $0.06 a minute');
});

t.test('seconds that cost nothing are not bounded by a spent budget (voice minutes still are)', async (t) => {
  const meter = new Meter({
    sql,
    config: { ...METER_DEFAULTS, HOSTED_USAGE_ENFORCEMENT: 'enforce', HOSTED_USAGE_DEFAULT_LIMIT_MICROS: 0 },
    log: captureLogger().log,
    voiceSecondMicros: 0,
  });
  const accountId = await newAccount();
  const grant = await reserveVoiceSeconds(meter, {
    accountId,
    sessionId: 'vs_free_budget',
    source: 'api',
    audience: 'owner',
    first: true,
  });
  t.equal(grant.seconds, 300, 'a full grant on a $0 budget');
});

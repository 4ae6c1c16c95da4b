import t from 'tap';
import { createUser } from '../../src/auth/index.js';
import { reserveVoiceSeconds, settleVoiceSeconds, sweepStaleReservations } from '../../src/metering/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_PASSWORD } from '../helpers/identity.js';
import { balanceOf, createTestMeter, ManualClock, refusalOf, setPlan } from '../helpers/metering.js';

const { sql } = await createTestDatabase(t);
let n = 0;
const newAccount = async () =>
  (await createUser(sql, { email: `voice-${++n}-${Date.now()}@example.test`, password: TEST_PASSWORD })).accountId;

const grantFor = (accountId: string, sessionId: string, extra: Record<string, unknown> = {}) => ({
  accountId,
  sessionId,
  source: 'api' as const,
  audience: 'owner' as const,
  first: true,
  ...extra,
});

t.test('voice minutes: partial grants and refusal below 30 s', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql);
  const g1 = await reserveVoiceSeconds(meter, grantFor(accountId, 'vs_a'));
  await settleVoiceSeconds(meter, g1, 280);
  const g2 = await reserveVoiceSeconds(meter, grantFor(accountId, 'vs_a', { first: false }));
  t.equal(g2.seconds, 300);
  await settleVoiceSeconds(meter, g2, 270);
  const g3 = await reserveVoiceSeconds(meter, grantFor(accountId, 'vs_a', { first: false }));
  t.equal(g3.seconds, 50, 'only what is left of the 600 s is granted');
  await settleVoiceSeconds(meter, g3, 40);
  const owner = await refusalOf(reserveVoiceSeconds(meter, grantFor(accountId, 'vs_b')));
  t.equal(owner.status, 402);
  t.equal(owner.reason, 'voice_minutes_exhausted');
  t.match(owner.details, { voiceSecondsLimit: 600, voiceSecondsUsed: 590 });
  const visitor = await refusalOf(
    reserveVoiceSeconds(meter, grantFor(accountId, 'vs_c', { source: 'widget', audience: 'visitor' })),
  );
  t.equal(visitor.status, 403);
  t.equal(visitor.reason, 'voice_unavailable');
  t.equal(visitor.details, undefined);
  const b = await balanceOf(sql, accountId);
  t.equal(b?.voiceSecondsUsed, 590);
  t.equal(b?.voiceSecondsReserved, 0);
  t.equal(b?.consumedMicros, 590 * 1_000, 'voice seconds are spend like any other, at their price');
  t.equal(b?.reservedMicros, 0, 'nothing held once every grant settled');
});

t.test('concurrent calls per plan; renewals are not concurrency-checked', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql);
  const a = await reserveVoiceSeconds(meter, grantFor(accountId, 'call_a', { requestedSeconds: 60 }));
  const second = await refusalOf(reserveVoiceSeconds(meter, grantFor(accountId, 'call_b', { requestedSeconds: 60 })));
  t.equal(second.status, 429);
  t.equal(second.reason, 'voice_concurrency_limit');
  const visitor = await refusalOf(
    reserveVoiceSeconds(meter, grantFor(accountId, 'call_b', { audience: 'visitor', source: 'widget' })),
  );
  t.equal(visitor.status, 403, 'visitors: voice_unavailable, not the concurrency reason');
  t.equal(visitor.reason, 'voice_unavailable');
  await settleVoiceSeconds(meter, a, 60);
  t.ok(
    (await reserveVoiceSeconds(meter, grantFor(accountId, 'call_b', { requestedSeconds: 60 }))).id,
    'a slot frees when the call ends',
  );

  await setPlan(sql, accountId, 'starter');
  t.ok(
    (await reserveVoiceSeconds(meter, grantFor(accountId, 'call_c', { requestedSeconds: 60 }))).id,
    'starter allows 2',
  );
  t.equal(
    (await refusalOf(reserveVoiceSeconds(meter, grantFor(accountId, 'call_d', { requestedSeconds: 60 })))).status,
    429,
  );
  t.ok(
    (await reserveVoiceSeconds(meter, grantFor(accountId, 'call_c', { first: false, requestedSeconds: 60 }))).id,
    'a running call renews',
  );
});

t.test('playground voice is not counted toward the minutes (VOICE_QUOTA_EXEMPT_PLAYGROUND)', async (t) => {
  const accountId = await newAccount();
  const { meter } = createTestMeter(sql);
  const g = await reserveVoiceSeconds(
    meter,
    grantFor(accountId, 'pg_1', { source: 'playground', requestedSeconds: 300 }),
  );
  t.equal(g.quotaExempt, true);
  await settleVoiceSeconds(meter, g, 120);
  const b = await balanceOf(sql, accountId);
  t.equal(b?.playgroundVoiceSeconds, 120);
  t.equal(b?.voiceSecondsUsed, 0);
  const { meter: counted } = createTestMeter(sql, { config: { VOICE_QUOTA_EXEMPT_PLAYGROUND: false } });
  const g2 = await reserveVoiceSeconds(
    counted,
    grantFor(accountId, 'pg_2', { source: 'playground', requestedSeconds: 100 }),
  );
  await settleVoiceSeconds(counted, g2, 100);
  t.equal((await balanceOf(sql, accountId))?.voiceSecondsUsed, 100, 'counted when the exemption is off');
});

t.test('shadow grants and records but never refuses; a crashed call is swept', async (t) => {
  const accountId = await newAccount();
  const clock = new ManualClock();
  const { meter } = createTestMeter(sql, { config: { HOSTED_USAGE_ENFORCEMENT: 'shadow' }, clock });
  for (let i = 0; i < 3; i++) {
    const g = await reserveVoiceSeconds(meter, grantFor(accountId, `sh_${i}`));
    t.equal(g.seconds, 300);
    await settleVoiceSeconds(meter, g, 300);
  }
  const crashed = await reserveVoiceSeconds(meter, grantFor(accountId, 'sh_crash'));
  t.equal((await balanceOf(sql, accountId))?.voiceSecondsUsed, 900, 'beyond the 600 s allowance, recorded');
  clock.advance(16 * 60_000);
  await sweepStaleReservations(meter);
  const [row] = await sql<[{ status: string }]>`select status from usage_reservations where id = ${crashed.id!}`;
  t.equal(row?.status, 'expired');
  t.equal((await balanceOf(sql, accountId))?.voiceSecondsReserved, 0, 'the crashed grant is released');
});

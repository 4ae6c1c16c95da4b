import t from 'tap';
import { startFaultRig } from './helpers.js';
import { assertSettledOnce, beatUntil, endCall, FAULT_ENV, startCall, voiceSetup } from './voice.js';

/**
 * A statement of the owner's sent during an outage is not withdrawn at its deadline: a re-assertion (a generation
 * bump of its own) can land after the database returns, even between the statements of the deferred settlement.
 * Here two such bumps are placed exactly there with row locks: the first lands while the settlement's UPDATE waits,
 * the second while whatever the owner does next waits. The call must still be settled, once, and billed.
 */
t.test('generation bumps of the owner landing during its settlement: settled once, not dropped', async (t) => {
  const rig = await startFaultRig(t, { env: { ...FAULT_ENV, DATABASE_QUERY_TIMEOUT_MS: '10000' } });
  const { app } = rig;
  const sql = rig.database.sql;
  const { owner, assistant } = await voiceSetup(app);
  const call = await startCall(t, app, owner, assistant);
  await beatUntil(call, 'healthy');
  const id = call.minted.sessionId;

  const waiting = async (like: string): Promise<number> => {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like ${like}`;
    return row!.n;
  };
  const until = async (what: string, check: () => Promise<boolean>, ms = 5000): Promise<boolean> => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    t.comment(`not seen within ${ms} ms: ${what}`);
    return false;
  };
  /** A late re-assertion: holds the row, then bumps its generation (only while active) when `go` resolves. */
  const lateBump = (go: Promise<void>) => {
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const done = sql.begin(async (tx) => {
      const pending = tx`select id from voice_sessions where id = ${id} for update`;
      void pending.then(() => locked());
      await pending;
      await go;
      await tx`update voice_sessions set owner_generation = owner_generation + 1 where id = ${id} and state = 'active'`;
    });
    return { holding, done };
  };

  let releaseFirst!: () => void;
  const first = lateBump(new Promise((r) => (releaseFirst = r)));
  await first.holding;

  const ended = endCall(call);
  t.ok(
    await until('the settlement waits for the row', async () => (await waiting('%set state =%')) === 1),
    'the settlement UPDATE waits behind the first bump',
  );

  let releaseSecond!: () => void;
  const second = lateBump(new Promise((r) => (releaseSecond = r)));
  t.ok(
    await until('the second bump queues', async () => (await waiting('%for update%')) === 1),
    'a second bump queues behind it',
  );

  releaseFirst();
  await first.done;
  await second.holding;
  // Whatever the owner sends next about this row waits behind the second bump, or the call is already settled.
  let settledFirst = false;
  void ended.then(() => (settledFirst = true));
  await until(
    'the owner acts again or is done',
    async () => settledFirst || (await waiting('%voice_sessions%')) > 0,
    3000,
  );
  releaseSecond();
  await second.done;

  const answer = await ended;
  t.equal(answer.status, 200, 'the caller gets its final answer');
  const deadline = Date.now() + 10_000;
  while (app.app.voice.pendingSettlements > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.equal(app.app.voice.pendingSettlements, 0, 'nothing left to settle');
  const row = await assertSettledOnce(t, sql, call, { state: 'ended' });
  t.equal(row.endReason, null, 'ended by the caller');
  t.equal(answer.body?.billableSeconds, row.billableSeconds, 'the final answer carries the stored seconds');
});

import t from 'tap';
import { ManualClock } from '../../src/providers/voice/index.js';
import { GateChannel, MAX_GATE_STREAMS } from '../../src/voice/session/gate.js';
import { issueControlToken, verifyControlToken } from '../../src/voice/session/control-token.js';
import { presentEndReason } from '../../src/voice/end-reasons.js';
import { Supervisor } from '../../src/voice/session/supervisor.js';
import { VoiceOwnership } from '../../src/voice/session/ownership.js';
import { createTestRedisStore } from '../helpers/store.js';

const SECRET = 'unit-test-secret-that-is-at-least-32-bytes';

t.test('control token: session-scoped, expiring, signed with the secret', async (t) => {
  const now = 1_700_000_000_000;
  const token = issueControlToken(SECRET, 'vs_a', now + 60_000);
  t.ok(verifyControlToken(SECRET, token, 'vs_a', now), 'opens its own session');
  t.notOk(verifyControlToken(SECRET, token, 'vs_b', now), 'does not open another session');
  t.notOk(
    verifyControlToken('another-secret-that-is-at-least-32-bytes!', token, 'vs_a', now),
    'another deployment secret fails',
  );
  t.notOk(verifyControlToken(SECRET, token, 'vs_a', now + 61_000), 'expires');
  // Every other last character is refused, including those base64url would decode to the same bytes.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const altered = [...alphabet].filter((c) => c !== token.at(-1)).map((c) => token.slice(0, -1) + c);
  t.ok(
    altered.every((v) => !verifyControlToken(SECRET, v, 'vs_a', now)),
    'no altered last character is accepted',
  );
  const [v, exp, mac] = token.split('.');
  t.notOk(
    verifyControlToken(SECRET, `${v}.${Number(exp) + 3600}.${mac}`, 'vs_a', now),
    'a stretched expiry breaks the MAC',
  );
  t.notOk(verifyControlToken(SECRET, `${v}.${exp}.${mac!.slice(0, -2)}AA`, 'vs_a', now), 'a changed MAC fails');
  for (const junk of ['', 'v1', 'v1..', 'v2.1.abc', 'x'.repeat(500)])
    t.notOk(verifyControlToken(SECRET, junk, 'vs_a', now), `junk "${junk.slice(0, 8)}" fails`);
});

t.test('ownership: claim, renew, 421 data, fencing by CAS, end requests', async (t) => {
  const store = await createTestRedisStore(t);
  let wall = Date.now();
  const a = new VoiceOwnership(store, 'instance-a', { renewEveryMs: 50, ttlMs: 300 }, () => wall);
  const b = new VoiceOwnership(store, 'instance-b', { renewEveryMs: 50, ttlMs: 300 }, () => wall);
  const lease = await a.claim('vs_1');
  t.ok(lease, 'claimed');
  t.equal(await b.claim('vs_1'), null, 'a second claim of the same id fails');
  t.match(
    await b.read('vs_1'),
    { instanceId: 'instance-a', generation: 1 },
    'any instance reads where the session lives',
  );
  wall += 100;
  t.same(await a.renew(lease!), { kind: 'renewed' });
  t.equal((await b.read('vs_1'))!.expiresAt, wall + 300, 'renewal moves expiresAt');

  const asked = await b.requestEnd('vs_1', 'superseded');
  t.equal(asked?.endRequested, 'superseded');
  const fenced = await a.renew(lease!);
  t.equal(fenced.kind, 'fenced', 'the owner learns of the change on its next renewal');
  t.equal(fenced.kind === 'fenced' ? fenced.current?.endRequested : undefined, 'superseded');

  const other = await a.claim('vs_2');
  await new Promise((r) => setTimeout(r, 450));
  t.equal(await b.read('vs_2'), null, 'a record not renewed expires');
  t.same(
    await a.renew(other!),
    { kind: 'missing' },
    'a late owner learns its record is gone (re-asserting it needs a database fence)',
  );
  t.equal(await b.read('vs_2'), null, 'the fenced renewal did not recreate the record');
  t.equal(await b.requestEnd('vs_2', 'superseded'), null, 'no owner to ask');

  const third = await a.claim('vs_3');
  await a.release(third!);
  t.equal(await b.read('vs_3'), null, 'released on end');
});

t.test('supervisor: one timer for all sessions, driven by the injected clock', async (t) => {
  const clock = new ManualClock(0);
  const supervisor = new Supervisor(clock, 1000);
  const seen: Array<[string, number]> = [];
  for (const name of ['a', 'b', 'c']) supervisor.add({ check: (now) => void seen.push([name, now]) });
  supervisor.start();
  t.equal(clock.pending, 1, 'one timer, whatever the number of sessions');
  clock.advance(3000);
  t.same(
    seen.filter(([n]) => n === 'a').map(([, at]) => at),
    [1000, 2000, 3000],
  );
  t.equal(seen.length, 9);
  supervisor.stop();
  t.equal(clock.pending, 0);
  clock.advance(5000);
  t.equal(seen.length, 9, 'nothing after stop');
});

t.test('gate: first line is the current decision, then new ones, keepalives, end; at most 4 streams', async (t) => {
  let now = 0;
  const gate = new GateChannel(() => now);
  const read = async (s: { next(): Promise<string | null> }) => {
    const line = await s.next();
    return line === null ? null : (JSON.parse(line) as Record<string, unknown>);
  };
  const first = gate.open()!;
  t.same(await read(first), { type: 'gate', seq: 0, state: 'closed', reason: 'start', inputEndMs: null });
  t.notOk(gate.isOpen);
  gate.decide('user_speaking', 400);
  gate.decide('user_speaking', 400);
  gate.decide('social');
  t.ok(gate.isOpen, 'social opens the gate');
  t.same(await read(first), { type: 'gate', seq: 1, state: 'closed', reason: 'user_speaking', inputEndMs: 400 });
  t.same(
    await read(first),
    { type: 'gate', seq: 2, state: 'open', reason: 'social', inputEndMs: null },
    'an unchanged decision is not repeated',
  );
  const late = gate.open()!;
  t.match(await read(late), { seq: 2, state: 'open' }, 'a later reader starts from the current decision');
  now = 9_999;
  gate.keepalive(now);
  now = 10_000;
  gate.keepalive(now);
  t.same(await read(first), { type: 'keepalive' }, 'keepalive after 10 s of quiet');
  t.ok(gate.open() && gate.open(), 'third and fourth streams');
  t.equal(gate.openStreams, MAX_GATE_STREAMS);
  t.equal(gate.open(), null, 'a fifth stream is refused');
  late.close();
  const again = gate.open();
  t.ok(again, 'a closed stream frees its slot');
  gate.end('idle');
  t.same(await read(first), { type: 'end', endReason: 'idle' });
  t.equal(await read(first), null, 'the stream closes after the end line');
  const after = gate.open()!;
  t.match(await read(after), { type: 'gate' });
  t.same(await read(after), { type: 'end', endReason: 'idle' }, 'a reader after the end gets the end line at once');
  t.equal(await read(after), null);
});

t.test('widget end-reason mapping', async (t) => {
  t.equal(presentEndReason('usage_limit', 'visitor'), 'voice_unavailable');
  for (const r of ['heartbeat_lost', 'control_lost', 'shutdown'] as const)
    t.equal(presentEndReason(r, 'visitor'), 'disconnected');
  for (const r of ['superseded', 'idle', 'max_duration', null] as const) t.equal(presentEndReason(r, 'visitor'), r);
  t.equal(presentEndReason('usage_limit', 'owner'), 'usage_limit', 'owners see the real reason');
});

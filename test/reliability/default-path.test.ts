import t from 'tap';
import postgres from 'postgres';
import { ownerWithAssistant, startParley } from './process.js';
import { scratchDir } from '../helpers/scratch.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** Aborted after `ms`: a request that never answers fails the test instead of hanging it. */
const timed = (ms: number) => AbortSignal.timeout(ms);

t.test("the README's metrics setup on the embedded default: chats and scrapes interleaved all answer", async (t) => {
  const parley = startParley(t, {
    DATA_DIR: scratchDir('parley-default-'),
    METRICS_TOKEN,
    SIGNUP_ENABLED: 'true',
  });
  const base = await parley.base;
  const { assistantId, apiKey } = await ownerWithAssistant(base);
  const scrape = async () => {
    const res = await fetch(`${base}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      signal: timed(10_000),
    });
    return { status: res.status, text: await res.text() };
  };
  const chat = async (message: string) => {
    const res = await fetch(`${base}/api/v1/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId, message }),
      signal: timed(10_000),
    });
    return { status: res.status, body: await res.text() };
  };

  for (let round = 0; round < 4; round++) {
    // Two chats and two scrapes in flight together, then one after the other.
    const [a, s1, b, s2] = await Promise.all([chat(`hello ${round}`), scrape(), chat(`again ${round}`), scrape()]);
    t.equal(a.status, 200, `round ${round}: the first chat answers (${a.body.slice(0, 120)})`);
    t.equal(b.status, 200, `round ${round}: the second chat answers`);
    t.equal(s1.status, 200);
    t.equal(s2.status, 200);
    const ready = await fetch(`${base}/readyz`, { signal: timed(5_000) });
    t.equal(ready.status, 200, `round ${round}: /readyz stays 200`);
  }
  const metrics = await scrape();
  t.match(
    metrics.text,
    /parley_metering_settlements_total\{kind="chat",instance_id="[^"]+"\} 8/,
    'all eight chats were settled',
  );
  t.match(
    metrics.text,
    /parley_http_requests_total\{method="POST",route="\/api\/v1\/chat",status="200",instance_id="[^"]+"\} 8/,
  );

  const sentAt = parley.signal('SIGTERM');
  const { code, at } = await parley.exited;
  t.equal(code, 0, 'a clean stop');
  t.ok(at - sentAt < 15_000, `SIGTERM stopped it in ${at - sentAt} ms`);
  t.match(parley.output(), /"stopped"/);
});

t.test('SIGTERM ends the process within drain + grace + the close budgets whatever holds the database', async (t) => {
  const parley = startParley(t, {
    DATA_DIR: scratchDir('parley-stuck-'),
    // No query deadline: nothing but the shutdown's own bounds can end what waits on the database.
    DATABASE_QUERY_TIMEOUT_MS: '0',
    VOICE_DRAIN_TIMEOUT_SECONDS: '1',
    SHUTDOWN_GRACE_MS: '500',
    SIGNUP_ENABLED: 'true',
  });
  const base = await parley.base;
  const { assistantId, apiKey } = await ownerWithAssistant(base);
  // The embedded database is one session: a client that opens a transaction and never ends it holds it for everyone.
  const port = /"port":(\d+),"durationMs"/.exec(parley.output())?.[1];
  t.ok(port, 'the embedded database logged its port');
  const holder = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => undefined });
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const inTransaction = new Promise<void>((resolve) => {
    void holder
      .begin(async (tx) => {
        await tx`select 1`;
        resolve();
        await held;
      })
      .catch(() => undefined);
  });
  t.teardown(async () => {
    release();
    await holder.end({ timeout: 1 }).catch(() => undefined);
  });
  await inTransaction;
  // A chat that waits on the database forever (the shutdown abandons it).
  const stuck = fetch(`${base}/api/v1/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ assistantId, message: 'hello' }),
    signal: timed(60_000),
  }).catch((err: unknown) => err);
  // Readiness fails on the database probe (its 1 s deadline), long after the chat was sent.
  const ready = await fetch(`${base}/readyz`, { signal: timed(10_000) });
  t.equal(ready.status, 503, 'the held database fails readiness');
  const sentAt = parley.signal('SIGTERM');
  const { code, at } = await parley.exited;
  await stuck;
  const tookMs = at - sentAt;
  // 1 s drain + 0.5 s grace + two close budgets of 7 s + 2 s: the process's own backstop.
  t.ok(tookMs < 1_000 + 500 + 16_000 + 1_000, `stopped in ${tookMs} ms`);
  t.not(code, null, 'it exited by itself (not killed by a signal)');
  t.match(parley.output(), /"draining"/);
});

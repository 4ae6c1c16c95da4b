import t from 'tap';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { uniquePrefix } from '../helpers/store.js';
import { startTestCluster } from './setup.js';

/**
 * A burst of 300 mints sent at once through the proxy to three instances (simulator provider, each instance capped at
 * 110 calls): no 500, 502 or 504; every call admitted lands so that the instances' live calls stay within 1.5x of
 * each other; once the calls end their slots are free again (a second burst right after is admitted the same way);
 * past the fleet's capacity the refusals are 429/503 with Retry-After and a code. Figures (latency) are the bench's
 * (`npm run bench -- --only=fleet`), not asserted here.
 */
const BURST = 300;
const CAP = 110;

interface Answer {
  status: number;
  sessionId?: string;
  code?: string;
  retryAfter: string | null;
}

t.test(
  '300 mints at once through the proxy: no error answer, even spread, slots freed',
  { timeout: 240_000 },
  async (t) => {
    const { owner, assistant, cluster, output } = await startTestCluster(t, {
      name: 'Burst',
      redisUrl: TEST_REDIS_URL,
      redisPrefix: uniquePrefix('burst'),
      // Admission lets the whole burst wait its turn (the test counts where calls land, not how fast on this machine).
      env: {
        VOICE_MAX_CONCURRENT_SESSIONS: String(CAP),
        DATABASE_POOL_SIZE: '8',
        ADMISSION_MINT_QUEUE_WAIT_MS: '60000',
      },
    });
    const minted: string[] = [];
    t.teardown(() => endAll(minted.splice(0)));
    const mint = async (): Promise<Answer> => {
      const res = await fetch(`${cluster.url}/api/v1/voice/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      let body: { sessionId?: string; code?: string } = {};
      try {
        body = JSON.parse(text);
      } catch {
        // HAProxy's own error pages are HTML: kept as a status without a code.
      }
      if (res.status === 200 && body.sessionId) minted.push(body.sessionId);
      return {
        status: res.status,
        sessionId: body.sessionId,
        code: body.code,
        retryAfter: res.headers.get('retry-after'),
      };
    };
    async function endAll(ids: string[]): Promise<void> {
      await Promise.all(
        ids.map((id) =>
          fetch(`${cluster.url}/api/v1/voice/sessions/${id}/end`, {
            method: 'POST',
            headers: { authorization: `Bearer ${owner.secret}`, 'content-type': 'application/json' },
            body: '{}',
          }).then((r) => r.arrayBuffer()),
        ),
      );
    }
    const burst = (n: number) => Promise.all(Array.from({ length: n }, mint));
    const spread = (answers: Answer[]) =>
      ['n1', 'n2', 'n3'].map(
        (k) => answers.filter((a) => a.status === 200 && a.sessionId?.startsWith(`vs_${k}_`)).length,
      );
    const judge = (answers: Answer[], what: string) => {
      const statuses = answers.map((a) => a.status);
      t.same(
        statuses.filter((s) => s !== 200 && s !== 429 && s !== 503),
        [],
        `${what}: every answer is 200, 429 or 503 (no 500, 502, 504)`,
      );
      const refused = answers.filter((a) => a.status !== 200);
      t.ok(
        refused.every((a) => a.retryAfter !== null && typeof a.code === 'string'),
        `${what}: each refusal has Retry-After and a code (${refused.length} refused)`,
      );
    };

    const first = await burst(BURST);
    judge(first, 'first burst');
    const counts = spread(first);
    t.comment(
      `first burst: ${first.filter((a) => a.status === 200).length} admitted, per instance ${counts.join('/')}`,
    );
    t.equal(
      counts.reduce((a, b) => a + b, 0),
      BURST,
      'every mint admitted (the fleet has room for 330)',
    );
    t.ok(
      Math.max(...counts) <= 1.5 * Math.min(...counts),
      `live calls within 1.5x of each other (${counts.join('/')})`,
    );

    // The calls end; their slots are free at once: the same burst again is admitted the same way.
    await endAll(minted.splice(0));
    const second = await burst(BURST);
    judge(second, 'second burst');
    const again = spread(second);
    t.equal(
      again.reduce((a, b) => a + b, 0),
      BURST,
      `every mint of the second burst admitted: no slot of an ended call lingered (${again.join('/')})`,
    );

    // Past the fleet's capacity (3 x 110): refusals, never errors.
    const over = await burst(60);
    judge(over, 'past capacity');
    const refused = over.filter((a) => a.status !== 200);
    t.ok(refused.length >= 30, `mints past the capacity are refused (${refused.length} of 60)`);
    t.ok(
      refused.every((a) => a.status === 429 && a.code === 'VOICE_INSTANCE_CONCURRENCY_LIMIT'),
      `as 429 with the concurrency code (${[...new Set(refused.map((a) => `${a.status} ${a.code}`))].join(', ')})`,
    );
    if (!t.passing())
      t.comment(
        output
          .filter((l) => /warn|error/i.test(l))
          .slice(-20)
          .join('\n'),
      );
  },
);

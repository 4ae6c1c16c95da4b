import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createAssistant } from '../../src/assistants/index.js';
import { waitUntil } from '../../scripts/cluster/cluster.js';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { createOwner } from '../helpers/identity.js';
import { uniquePrefix } from '../helpers/store.js';
import { Caller } from './caller.js';

/** `npm run cluster` as a person runs it: its help, what it names first, its signals and what it reports. */
const MAIN = fileURLToPath(new URL('../../scripts/cluster/main.ts', import.meta.url));

t.test('--help answers, an unknown option is refused with the usage', async (t) => {
  const help = spawnSync(process.execPath, ['--import', 'tsx', MAIN, '--help'], { encoding: 'utf8' });
  t.equal(help.status, 0, '--help exits 0');
  t.match(help.stdout, /--instances N[\s\S]*--port P[\s\S]*--instance-ports LIST[\s\S]*--drain S/);
  const bad = spawnSync(process.execPath, ['--import', 'tsx', MAIN, '--bogus'], { encoding: 'utf8' });
  t.equal(bad.status, 2, 'an unknown option exits 2');
  t.match(bad.stderr, /Unknown option '--bogus'[\s\S]*Usage: npm run cluster/, 'naming it, with the usage');
});

t.test(
  'names its database and Redis first; a rolling restart and a stop name the calls they cut; one press drains',
  { timeout: 300_000 },
  async (t) => {
    const database = await createTestDatabase(t);
    const owner = await createOwner(database.sql);
    const assistant = await createAssistant(
      database.sql,
      { accountId: owner.accountId },
      {
        name: 'CLI voice',
        instructions: 'Be brief.',
        settings: {
          voice: {
            enabled: true,
            recording: 'off',
            requireConsent: false,
            maxDurationSeconds: 900,
            idleTimeoutSeconds: 600,
          },
        },
      },
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-cluster-cli-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    const prefix = uniquePrefix('cli');
    // Its own process group, as a terminal's foreground job: a signal to the group is a Ctrl-C.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, '--instances', '2', '--port', '0', '--drain', '3', '--quiet', '--data-dir', dataDir],
      {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          DATABASE_URL: database.url,
          REDIS_URL: TEST_REDIS_URL,
          REDIS_KEY_PREFIX: prefix,
          SECRET_KEY: 'cluster-cli-test-secret-key-at-least-32-bytes',
          VOICE_HEARTBEAT_INTERVAL_MS: '1000',
          API_RATE_LIMIT_PER_MINUTE: '100000',
        },
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    t.teardown(async () => {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      await exited;
    });
    const callers: Caller[] = [];
    t.teardown(() => callers.forEach((c) => c.dispose()));
    const call = async (url: string) => {
      const c = new Caller(url, owner.secret, assistant.publicId);
      callers.push(c);
      await c.start();
      return c;
    };

    await waitUntil(() => /proxy\s+(http:\S+)/.test(out) || child.exitCode !== null, 120_000, 'the proxy URL');
    const firstLines = out.split('\n').slice(0, 3).join('\n');
    t.match(firstLines, /database\s+postgres:\/\/\S+ \(DATABASE_URL\)/, 'its first lines name the database');
    t.match(firstLines, new RegExp(`redis\\s+redis://\\S+ prefix ${prefix} \\(REDIS_URL\\)`), 'and Redis');
    const proxy = /proxy\s+(http:\S+)/.exec(out)![1]!;

    // Rolling restart: two calls that outlive the 3 s drain are cut, and named.
    const held = [await call(proxy), await call(proxy)];
    process.kill(child.pid!, 'SIGHUP');
    await waitUntil(() => /rolling restart (done|stopped)/.test(out), 180_000, 'the rolling restart');
    t.match(out, /rolling restart done/, 'the rolling restart finished');
    t.match(out, /each waits up to 3 s for its calls/, 'it states the drain');
    t.match(out, /draining: no new calls; \d+ live call\(s\)/, 'and how many calls each instance drains');
    for (const c of held) t.match(out, c.sessionId, `the call it cut is named (${c.sessionId})`);

    // One press (a group signal, and a copy of it right after, as npm and tsx relay it): a drain, not a cut.
    const last = await call(proxy);
    const pressed = Date.now();
    process.kill(-child.pid!, 'SIGINT');
    process.kill(child.pid!, 'SIGINT');
    await waitUntil(() => /SIGINT: stopping/.test(out), 10_000, 'the stop to begin');
    const beats = last.heartbeats.length;
    await waitUntil(() => last.heartbeats.length >= beats + 1, 10_000, 'a heartbeat during the drain');
    t.equal(last.heartbeats.at(-1)?.body?.status, 'healthy', 'the call goes on while its instance drains');
    t.notMatch(out, /SIGINT again/, 'one press counted once');
    // A second press (copies within a second count as the first): the remaining call ends now.
    await waitUntil(() => Date.now() - pressed > 1200, 5000, 'a second to pass');
    process.kill(-child.pid!, 'SIGINT');
    t.equal(await exited, 0, 'the command exits 0');
    t.match(out, /SIGINT again: the remaining calls end now/);
    t.match(out, last.sessionId, 'the call the stop cut is named');
    const [row] = await database.sql<Array<{ endReason: string }>>`
      select end_reason from voice_sessions where id = ${last.sessionId}`;
    t.equal(row?.endReason, 'shutdown', 'and it ended shutdown');
    if (!t.passing()) t.comment(out.slice(-3000));
  },
);

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { composeHaproxyConfig, renderHaproxyConfig } from '../../scripts/cluster/haproxy-config.js';

const deploy = (name: string) => readFileSync(new URL(`../../deploy/${name}`, import.meta.url), 'utf8');

t.test('deploy/haproxy.cfg is the rendered configuration, and HAProxy accepts it', async (t) => {
  t.equal(
    deploy('haproxy.cfg'),
    composeHaproxyConfig(),
    'deploy/haproxy.cfg matches scripts/cluster/haproxy-config.ts (re-render it on purpose)',
  );
  const dir = mkdtempSync(join(tmpdir(), 'parley-haproxy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'haproxy.cfg');
  // The compose file resolves names through Docker's DNS; the same rules with loopback addresses must parse cleanly.
  writeFileSync(
    path,
    renderHaproxyConfig({
      bind: '127.0.0.1:1',
      instances: [
        { routeKey: 'a', address: '127.0.0.1:2' },
        { routeKey: 'b', address: '127.0.0.1:3' },
      ],
    }),
  );
  const out = execFileSync('/usr/sbin/haproxy', ['-c', '-f', path], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.match(out, /Configuration file is valid/);
});

t.test('compose.yaml agrees with the proxy: one route key per instance, each with its server line', async (t) => {
  const compose = deploy('compose.yaml');
  const cfg = deploy('haproxy.cfg');
  const keys = [...compose.matchAll(/INSTANCE_ROUTE_KEY: (\S+)/g)].map((m) => m[1]);
  t.same(keys, ['a', 'b'], 'each instance has its own route key');
  for (const key of keys) {
    t.equal([...cfg.matchAll(new RegExp(`^  server ${key} `, 'gm'))].length, 2, `server ${key} in both backends`);
    t.match(
      cfg,
      `use-server ${key} if { path_beg /api/v1/voice/sessions/vs_${key}_ }`,
      `session requests for ${key} go to it`,
    );
  }
  t.match(compose, './haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg', 'the proxy runs deploy/haproxy.cfg');
  t.match(compose, 'env_file: .env', 'instances read the copied env file, never env.example itself');
  const grace = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]);
  t.ok(grace > 300, 'the stop timeout outlasts the default voice drain (300 s)');
  t.match(compose, /recordings:\/data\/recordings/, 'recordings on a volume every instance mounts');
});

t.test('the renderer refuses route keys the proxy rules cannot carry', async (t) => {
  t.throws(() => renderHaproxyConfig({ bind: ':1', instances: [{ routeKey: 'A_1', address: 'x:1' }] }), /lowercase/);
  t.throws(
    () =>
      renderHaproxyConfig({
        bind: ':1',
        instances: [
          { routeKey: 'a', address: 'x:1' },
          { routeKey: 'a', address: 'x:2' },
        ],
      }),
    /unique/,
  );
});

t.test(
  'spare route-key slots (npm run cluster): declared in maintenance with their rules, behind an admin socket',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'parley-haproxy-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const cfg = renderHaproxyConfig({
      bind: '127.0.0.1:1',
      instances: [
        { routeKey: 'n1', address: '127.0.0.1:2' },
        { routeKey: 'n2', address: '127.0.0.1:9', spare: true },
      ],
      adminSocket: join(dir, 'haproxy.sock'),
    });
    t.equal(
      [...cfg.matchAll(/^ {2}server n2 127\.0\.0\.1:9 check disabled$/gm)].length,
      2,
      'the spare is in both backends, in maintenance',
    );
    t.match(cfg, 'use-server n2 if { path_beg /api/v1/voice/sessions/vs_n2_ }', 'with its session rule ready');
    t.match(
      cfg,
      `stats socket ${join(dir, 'haproxy.sock')} mode 600 level admin`,
      'the runtime API is private to its owner',
    );
    const path = join(dir, 'haproxy.cfg');
    writeFileSync(path, cfg);
    t.match(
      execFileSync('/usr/sbin/haproxy', ['-c', '-f', path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
      /Configuration file is valid/,
    );
  },
);

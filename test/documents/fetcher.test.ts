import t from 'tap';
import {
  allowAlso,
  guardedFetch,
  isPublicAddress,
  publicAddressesOnly,
  type GuardedFetchError,
} from '../../src/documents/index.js';
import { startPageServer } from './page-server.js';

const caps = { maxBytes: 64 * 1024, timeoutMs: 2000 };
const loopbackAllowed = allowAlso(['127.0.0.1']);

async function failureOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (err) {
    return (err as GuardedFetchError).failure ?? String(err);
  }
}

t.test(
  'the default policy refuses private, loopback, link-local, ULA, multicast, unspecified and mapped addresses',
  async (t) => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.8',
      '172.16.3.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2002:a00:1::',
    ]) {
      t.notOk(isPublicAddress(address), `${address} is refused`);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      t.ok(isPublicAddress(address), `${address} is allowed`);
  },
);

t.test('the default guard refuses loopback targets, whatever way they are written', async (t) => {
  const page = await startPageServer(t, { '/': (_req, res) => res.end('secret admin page') });
  for (const target of [
    page.url,
    `http://localhost:${page.port}/`,
    `http://[::1]:${page.port}/`,
    `http://[::ffff:127.0.0.1]:${page.port}/`,
    `http://2130706433:${page.port}/`,
  ]) {
    t.equal(
      await failureOf(guardedFetch(target, { ...caps, policy: publicAddressesOnly })),
      'blocked_address',
      `${target} refused`,
    );
  }
  t.same(page.hits, {}, 'the loopback server was never contacted');
});

t.test('a name resolving to any private address is refused (checked after DNS, all answers)', async (t) => {
  const lookup = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ];
  t.equal(await failureOf(guardedFetch('http://mixed.example/', { ...caps, lookup })), 'blocked_address');
  const metadata = async () => [{ address: '169.254.169.254', family: 4 }];
  t.equal(
    await failureOf(guardedFetch('http://metadata.example/latest', { ...caps, lookup: metadata })),
    'blocked_address',
  );
});

t.test('only http and https, and no credentials', async (t) => {
  for (const target of [
    'file:///etc/passwd',
    'ftp://example.com/x',
    'gopher://example.com',
    'http://user:pw@example.com/',
    'not a url',
  ]) {
    t.equal(await failureOf(guardedFetch(target, caps)), 'bad_url', target);
  }
});

t.test('the connection is pinned to the checked address: a second DNS answer cannot redirect it', async (t) => {
  const page = await startPageServer(t, {
    '/doc': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('pinned content'),
  });
  let calls = 0;
  // Rebinding: the first answer passes the check; any later answer would point somewhere private.
  const lookup = async () =>
    ++calls === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }];
  const fetched = await guardedFetch(`http://rebind.test:${page.port}/doc`, {
    ...caps,
    policy: loopbackAllowed,
    lookup,
  });
  t.equal(fetched.body.toString(), 'pinned content');
  t.equal(calls, 1, 'resolved exactly once, by the guard');
});

t.test('redirects are followed by hand, each hop checked again, at most 3', async (t) => {
  const page = await startPageServer(t, {
    '/start': (_req, res) => res.writeHead(302, { location: '/final' }).end(),
    '/final': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Final</h1>'),
    '/to-private': (_req, res) => res.writeHead(301, { location: 'http://10.0.0.1/admin' }).end(),
    '/to-metadata': (_req, res) => res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
    '/to-file': (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
  });
  const ok = await guardedFetch(`${page.url}/start`, { ...caps, policy: loopbackAllowed });
  t.equal(ok.url, `${page.url}/final`);
  t.match(ok.contentType, /text\/html/);
  t.equal(
    await failureOf(guardedFetch(`${page.url}/to-private`, { ...caps, policy: loopbackAllowed })),
    'blocked_address',
    'redirect to a private address refused',
  );
  t.equal(
    await failureOf(guardedFetch(`${page.url}/to-metadata`, { ...caps, policy: loopbackAllowed })),
    'blocked_address',
    'redirect to the metadata address refused',
  );
  t.equal(
    await failureOf(guardedFetch(`${page.url}/to-file`, { ...caps, policy: loopbackAllowed })),
    'bad_url',
    'redirect to another scheme refused',
  );
  t.equal(
    await failureOf(guardedFetch(`${page.url}/loop`, { ...caps, policy: loopbackAllowed })),
    'too_many_redirects',
  );
  t.equal(page.hits['/loop'], 4, 'the first request and three redirects, no more');
});

t.test('bytes and time are capped', async (t) => {
  const page = await startPageServer(t, {
    '/big': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('x'.repeat(200 * 1024));
    },
    '/big-chunked': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
      for (let i = 0; i < 100; i++) res.write('y'.repeat(4096));
      res.end();
    },
    '/slow': (_req, res) => {
      const timer = setTimeout(() => res.end('too late'), 3000);
      res.on('close', () => clearTimeout(timer));
    },
    '/gone': (_req, res) => res.writeHead(503).end(),
  });
  t.equal(
    await failureOf(guardedFetch(`${page.url}/big`, { ...caps, policy: loopbackAllowed })),
    'too_large',
    'declared length over the cap',
  );
  t.equal(
    await failureOf(guardedFetch(`${page.url}/big-chunked`, { ...caps, policy: loopbackAllowed })),
    'too_large',
    'streamed bytes over the cap',
  );
  const started = Date.now();
  t.equal(
    await failureOf(guardedFetch(`${page.url}/slow`, { ...caps, timeoutMs: 200, policy: loopbackAllowed })),
    'timeout',
  );
  t.ok(Date.now() - started < 1500, 'gave up near the time cap');
  const gone = await guardedFetch(`${page.url}/gone`, { ...caps, policy: loopbackAllowed }).catch(
    (err: GuardedFetchError) => err,
  );
  t.match(gone, { failure: 'http_status', status: 503, retryable: true }, 'a 503 is a retryable status failure');
});

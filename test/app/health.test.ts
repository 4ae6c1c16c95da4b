import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

t.test('healthz and readyz on a running instance', async (t) => {
  const { url, deps } = await startTestApp(t);
  const live = await fetch(`${url}/healthz`);
  t.equal(live.status, 200);
  t.same(await live.json(), { status: 'ok' });
  const ready = await fetch(`${url}/readyz`);
  t.equal(ready.status, 200);
  t.same(await ready.json(), { status: 'ready', checks: { database: 'ok', store: 'ok' } });

  await deps.store.close(); // the store stops answering
  const notReady = await fetch(`${url}/readyz`);
  t.equal(notReady.status, 503);
  t.match(await notReady.json(), { code: 'HTTP_NOT_READY', details: { failed: ['store'] } });
  t.equal((await fetch(`${url}/healthz`)).status, 200, 'still alive');
});

t.test('GET / sends a browser to the dashboard; a JSON client gets JSON', async (t) => {
  const { url } = await startTestApp(t);
  const browser = await fetch(`${url}/`, {
    redirect: 'manual',
    headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
  });
  t.equal(browser.status, 302, 'a browser is redirected');
  t.equal(browser.headers.get('location'), '/dashboard/', 'to the dashboard');
  const client = await fetch(`${url}/`, { headers: { accept: 'application/json' } });
  t.equal(client.status, 200);
  t.match(await client.json(), { service: 'parley', dashboard: '/dashboard/', api: '/api/v1' }, 'JSON clients: JSON');
  const curl = await fetch(`${url}/`, { headers: { accept: '*/*' } });
  t.equal(curl.headers.get('content-type')?.split(';')[0], 'application/json', 'curl (*/*) gets JSON too');
});

t.test('the access log keeps health checks and static files out of info; the rest is logged', async (t) => {
  const { url, logs } = await startTestApp(t);
  for (let i = 0; i < 3; i++) await (await fetch(`${url}/readyz`)).arrayBuffer(); // a proxy's checks
  await (await fetch(`${url}/healthz`)).arrayBuffer();
  await (await fetch(`${url}/api/v1/assistants`)).arrayBuffer(); // 401: an owner's request is still logged
  const access = () => logs.lines.filter((l) => l['component'] === 'access');
  await waitFor(() => access().some((l) => l['route'] === '/api/v1/assistants'), 'the API request is logged');
  t.same(
    access()
      .map((l) => l['route'])
      .filter((r) => r === '/readyz' || r === '/healthz'),
    [],
    'successful health checks are not at info',
  );
});

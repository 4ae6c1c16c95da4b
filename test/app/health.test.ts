import t from 'tap';
import { startTestApp } from '../helpers/app.js';

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

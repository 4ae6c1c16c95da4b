import t from 'tap';
import { Meter, priceIngestion } from '../../src/metering/index.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { captureLogger } from '../helpers/log.js';

/**
 * Honest numbers: a self-hosted server's usage summary shows no cap (none applies there), a billed server shows its
 * plan's; storing a document's chunks costs nothing (it runs on this machine), a hosted step is priced as configured.
 */
t.test('the usage summary of a self-hosted server has no cap; a billed one shows the plan', async (t) => {
  const selfHosted = await startTestApp(t);
  const billed = await startTestApp(t, { database: selfHosted.database, env: { SELF_HOSTED: 'false' } });
  const owner = await createOwner(selfHosted.deps.sql);
  const summaryOn = async (url: string) => {
    const cookie = await login(url, owner.email, owner.password);
    const res = await fetch(`${url}/api/v1/account/usage/summary`, { headers: dashboardHeaders(url, cookie) });
    t.equal(res.status, 200);
    return ((await res.json()) as { summary: any }).summary;
  };
  t.match(await summaryOn(selfHosted.url), {
    selfHosted: true,
    limitMicros: null,
    remainingMicros: null,
    monthlyRequestCap: null,
    consumedMicros: 0,
    voice: { voiceSecondsLimit: null, voiceSecondsUsed: 0 },
  });
  t.match(await summaryOn(billed.url), {
    selfHosted: false,
    planCode: 'free',
    limitMicros: 1_000_000,
    remainingMicros: 1_000_000,
    monthlyRequestCap: 75,
    voice: { voiceSecondsLimit: 600 },
  });
});

t.test('ingestion is priced $0 on this machine; a hosted step at its configured price', async (t) => {
  const app = await startTestApp(t);
  t.equal(priceIngestion(12), 0, 'the catalog: a chunk stored on this machine costs nothing');
  t.equal(priceIngestion(12, 20), 240, 'a hosted step: its price per chunk');
  const meter = (ingestionChunkMicros?: number) =>
    new Meter({
      sql: app.deps.sql,
      config: app.config,
      log: captureLogger().log,
      ...(ingestionChunkMicros === undefined ? {} : { ingestionChunkMicros }),
    });
  t.equal(meter().priceIngestion(12), 0, "the app's meter by default");
  t.equal(meter(20).priceIngestion(12), 240);
});

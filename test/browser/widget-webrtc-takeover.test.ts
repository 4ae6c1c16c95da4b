import t from 'tap';
import { buildWidget } from '../../web/widget/build.js';
import { startTestCluster } from '../cluster/setup.js';
import { assertSettledOnce, startReplayingSimulator, type Call } from '../fault/voice.js';
import { launchBrowser, makeSpeechWav, untilWidgetHook, widgetHook } from '../helpers/browser.js';
import { TEST_REDIS_URL } from '../helpers/env.js';
import { uniquePrefix } from '../helpers/store.js';
import { waitFor } from '../voice/helpers.js';
import { events, hostSite, openHost, until } from './host-site.js';

/**
 * A visitor's WebRTC call, in Debian's chromium with the fake microphone, outlives the instance that minted it: two
 * instances behind HAProxy, the widget on a host page talks to the proxy; the owner of the call is killed -9 while
 * the visitor talks. The audio runs between the page and the provider, so the survivor takes the call over (the next
 * ownership generation, the sideband re-attached) through the widget's own heartbeats and gate stream, the visitor
 * keeps hearing the assistant without being told anything went wrong, and the call is settled once.
 */
t.test(
  'the owner of a WebRTC call from the widget is killed -9: the call goes on, audible, settled once',
  { timeout: 180_000 },
  async (t) => {
    await buildWidget();
    const sim = await startReplayingSimulator(t);
    let proxyUrl = '';
    const host = await hostSite(t, () => proxyUrl);
    const { owner, assistant, cluster, database, output } = await startTestCluster(t, {
      name: 'WidgetTakeover',
      instances: 2,
      redisUrl: TEST_REDIS_URL,
      redisPrefix: uniquePrefix('wtakeover'),
      allowedDomains: [host.origin],
      env: { VOICE_PROVIDER_URL: sim.url, VOICE_OWNERSHIP_TTL_SECONDS: '3' },
    });
    proxyUrl = cluster.url;
    const wav = await makeSpeechWav(t, 'Hello there. When are you open tomorrow?');
    const browser = await launchBrowser(t, { fakeAudioWav: wav });
    const page = await openHost(browser, host.url(assistant.publicId, { transport: 'auto' }));

    await page.getByRole('button', { name: 'Start voice call' }).click();
    await until(
      page,
      `window.__parley.some((e) => e.type === 'parley:state' && e.detail.voice === 'listening')`,
      'listening',
    );
    const transports = (await events(page, 'parley:state')).map((d) => d.transport).filter(Boolean);
    t.same([...new Set(transports)], ['webrtc'], 'the call runs over WebRTC');
    const before = await untilWidgetHook(page, (h) => h.audibleSamples >= 3, 'the assistant heard before the kill');
    t.ok(before.maxOutputRms > 0.01, `non-silent audio at the page (max RMS ${before.maxOutputRms.toFixed(3)})`);
    const sessionId: string = before.session.sessionId;
    const doomed = cluster.instances.find((i) => sessionId.startsWith(`vs_${i.routeKey}_`))!;
    const survivor = cluster.instances.find((i) => i !== doomed)!;
    const record = (await waitFor(() => [...sim.stats.sessions.values()][0], 'the provider session'))!;

    const killed = performance.now();
    doomed.kill('SIGKILL');
    await doomed.exited;

    // The widget's next heartbeats and its gate stream reach the survivor (the proxy marks the dead owner down): it
    // takes the call over at the next ownership generation and re-attaches the sideband.
    await waitFor(
      async () => {
        const [row] = await database.sql<{ ownerInstance: string; ownerGeneration: number; state: string }[]>`
          select owner_instance, owner_generation, state from voice_sessions where id = ${sessionId}`;
        return row?.ownerInstance === survivor.instanceId && row.ownerGeneration === 2 && row.state === 'active';
      },
      'the survivor to take the call over',
      30_000,
    ).catch((err: Error) => {
      t.comment(output.slice(-40).join('\n'));
      throw err;
    });
    t.comment(`taken over ${(performance.now() - killed).toFixed(0)} ms after the kill (figure, not asserted)`);
    await waitFor(() => record.resumes >= 1, 'the sideband re-attached at the provider');
    t.notOk(record.ended, 'the provider session never stopped');

    // The fake microphone loops the question: the caller is heard by the survivor (its words stored), the
    // assistant answers anew, and the page hears that answer.
    const killedAt = new Date();
    const spokenAtTakeover = record.outputTranscripts.length;
    await waitFor(
      async () => {
        const rows = await database.sql<{ n: number }[]>`
          select count(*)::int as n from messages m join voice_sessions s on s.conversation_id = m.conversation_id
          where s.id = ${sessionId} and m.role = 'user' and m.created_at > ${killedAt}`;
        return rows[0]!.n > 0;
      },
      "the caller's words stored by the survivor",
      45_000,
    );
    await waitFor(() => record.outputTranscripts.length > spokenAtTakeover, 'a new answer after the takeover', 30_000);
    const heardAtAnswer = (await widgetHook(page)).audibleSamples as number;
    await untilWidgetHook(page, (h) => h.audibleSamples >= heardAtAnswer + 3, 'that answer heard at the page', {
      timeoutMs: 30_000,
    });
    t.same(await events(page, 'parley:ended'), [], 'the visitor was never told the call ended');
    t.same(await events(page, 'parley:error'), [], 'nor shown an error');

    await page.getByRole('button', { name: 'End call' }).click();
    await until(page, `window.__parley.some((e) => e.type === 'parley:ended')`, 'parley:ended');
    await waitFor(async () => {
      const [row] = await database.sql<{ state: string }[]>`select state from voice_sessions where id = ${sessionId}`;
      return row?.state !== 'active';
    }, 'the call settled on the survivor');
    const call = { minted: { sessionId }, owner } as unknown as Call;
    await assertSettledOnce(t, database.sql, call, { state: 'ended' });
    await waitFor(() => record.ended, 'hung up at the provider');
    t.equal(record.clientEvents.filter((e) => e === 'hangup').length, 1, 'hung up once');
    await page.close();
  },
);

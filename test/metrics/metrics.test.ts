import t from 'tap';
import { freePort } from '../../scripts/cluster/cluster.js';
import { bearer } from '../helpers/identity.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';
import {
  endWithKey,
  heartbeat,
  mintWithKey,
  ownerWithVoice,
  startVoiceApp,
  voiceAssistant,
  voicedFrame,
  waitFor,
} from '../voice/helpers.js';

const TOKEN = 'metrics-token-for-the-test-0123456789';

/**
 * One sample's value from Prometheus text, by name and exact label set (`{a="x",b="y"}` or ''), apart from the
 * instance_id label every sample carries.
 */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text
    .split('\n')
    .map((l) =>
      l
        .replace(/instance_id="[^"]*",?/, '')
        .replace(',}', '}')
        .replace('{}', ''),
    )
    .find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

t.test(
  'GET /metrics with METRICS_TOKEN: bearer only; voice, HTTP, metering and event-loop figures from a real call',
  async (t) => {
    const app = await startVoiceApp(t, { env: { METRICS_TOKEN: TOKEN } });
    const scrape = async () => {
      const res = await fetch(`${app.url}/metrics`, { headers: bearer(TOKEN) });
      t.equal(res.status, 200);
      t.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      return res.text();
    };

    for (const headers of [{}, bearer('not-the-metrics-token-0000'), { authorization: TOKEN }]) {
      const res = await fetch(`${app.url}/metrics`, { headers });
      t.equal(res.status, 401, 'no or wrong token: 401');
      t.equal(((await res.json()) as { code: string }).code, 'METRICS_UNAUTHORIZED');
    }

    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);
    const minted = await mintWithKey(app, owner, assistant);
    const media = await openMedia(mediaUrl(app, minted));
    for (let i = 0; i < 25; i++) media.send(voicedFrame());
    await waitFor(
      () => (app.app.voice.media?.relays.get(minted.sessionId)?.stats.callerFrames ?? 0) >= 25,
      'the relay to take the frames',
    );
    t.equal((await heartbeat(app, minted)).status, 200);
    const during = await scrape();
    t.equal(sample(during, 'parley_voice_sessions_active'), 1, 'one active call');
    t.match(during, /^parley_voice_sessions_active\{instance_id="[^"]+"\} 1$/m, 'each sample names its instance');
    t.ok(
      (sample(during, 'parley_voice_relay_frames_total', '{direction="in"}') ?? 0) >= 25,
      'caller frames counted (live relay)',
    );
    t.ok(
      (sample(during, 'parley_voice_relay_bytes_total', '{direction="in"}') ?? 0) >= 25 * 960,
      'caller bytes counted',
    );
    t.equal(
      sample(during, 'parley_voice_heartbeats_total', '{status="healthy"}'),
      1,
      'the heartbeat answer, by status',
    );
    t.ok(
      (sample(during, 'parley_voice_gate_decisions_total', '{state="closed",reason="start"}') ?? 0) >= 0,
      'gate decisions are exported',
    );

    t.equal((await endWithKey(app, owner, minted.sessionId)).status, 200);
    await media.closed;
    // A refused mint: voice is off for this assistant (403 VOICE_DISABLED).
    const silent = await voiceAssistant(app, owner, { voice: { enabled: false } });
    const refused = await fetch(`${app.url}/api/v1/voice/sessions`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
      body: JSON.stringify({ assistantId: silent.publicId, capabilities: ['heartbeat', 'playback_gate'] }),
    });
    t.equal(refused.status, 403);
    const refusedCode = ((await refused.json()) as { code: string }).code;
    const after = await scrape();
    t.equal(sample(after, 'parley_voice_sessions_active'), 0, 'no active call after the end');
    t.equal(sample(after, 'parley_voice_mints_total', '{outcome="ok",reason="ok"}'), 1, 'one minted');
    t.equal(
      sample(after, 'parley_voice_mints_total', `{outcome="refused",reason="${refusedCode}"}`),
      1,
      'one refused, by code',
    );
    t.equal(sample(after, 'parley_voice_ends_total', '{reason="client"}'), 1, 'one ended by its caller');
    t.ok(
      (sample(after, 'parley_voice_relay_frames_total', '{direction="in"}') ?? 0) >= 25,
      'frames of closed relays still counted',
    );
    t.equal(sample(after, 'parley_voice_provider_reconnects_total'), 0, 'provider reconnects exported');
    t.ok(sample(after, 'parley_voice_audio_dropped_bytes_total') !== undefined, 'dropped audio exported');
    t.equal(
      sample(after, 'parley_metering_reservations_total', '{kind="voice",outcome="reserved"}'),
      1,
      'the voice grant',
    );
    t.equal(sample(after, 'parley_metering_settlements_total', '{kind="voice"}'), 1, 'settled once');
    t.equal(
      sample(
        after,
        'parley_http_requests_total',
        '{method="POST",route="/api/v1/voice/sessions/:sessionId/heartbeat",status="200"}',
      ),
      1,
      'requests by route pattern and status',
    );
    t.equal(
      sample(
        after,
        'parley_http_request_duration_seconds_count',
        '{method="POST",route="/api/v1/voice/sessions/:sessionId/end"}',
      ),
      1,
      'durations by route pattern',
    );
    t.ok(sample(after, 'nodejs_eventloop_lag_p99_seconds') !== undefined, 'event-loop delay');
    t.notMatch(after, minted.sessionId, 'no session id in any label (bounded labels)');
    t.notMatch(after, TOKEN, 'the token is never echoed');

    const access = app.logs.lines.filter((l) => l.msg === 'request');
    const beat = access.find((l) => l.route === '/api/v1/voice/sessions/:sessionId/heartbeat');
    t.match(
      beat,
      { method: 'POST', status: 200, requestId: String, durationMs: Number },
      'an access-log line per request: route pattern, status, duration, request id',
    );
    t.notOk(
      access.some(
        (l) => JSON.stringify(l).includes(minted.sessionId) || JSON.stringify(l).includes(minted.controlToken),
      ),
      'no path, id or token in the access log',
    );
  },
);

t.test('metrics are off by default; METRICS_PORT serves them on a port of their own', async (t) => {
  const off = await startVoiceApp(t, { env: { ACCESS_LOG_SAMPLE_RATE: '0' } });
  t.equal(
    (await fetch(`${off.url}/metrics`, { headers: bearer(TOKEN) })).status,
    404,
    'no METRICS_TOKEN / METRICS_PORT: no /metrics',
  );
  t.equal((await fetch(`${off.url}/healthz`)).status, 200);
  t.equal(off.logs.lines.filter((l) => l.msg === 'request').length, 0, 'ACCESS_LOG_SAMPLE_RATE=0: no access log');

  const port = await freePort();
  const own = await startVoiceApp(t, { env: { METRICS_PORT: String(port), HOST: '127.0.0.1' } });
  t.equal((await fetch(`${own.url}/metrics`)).status, 404, 'not on the service port');
  await fetch(`${own.url}/healthz`);
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  t.equal(res.status, 200, 'on METRICS_PORT');
  t.match(
    await res.text(),
    /parley_http_requests_total\{method="GET",route="\/healthz",status="200",instance_id="[^"]+"\} 1/,
  );
  t.equal((await fetch(`http://127.0.0.1:${port}/other`)).status, 404, 'nothing else there');
});

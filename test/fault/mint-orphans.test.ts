import t from 'tap';
import { connect } from 'node:net';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { bearer } from '../helpers/identity.js';
import { startFaultRig, timedRequest } from './helpers.js';
import { FAULT_ENV, voiceSetup } from './voice.js';

/** One raw HTTP/1.1 request (duplicate headers are possible here, unlike fetch). */
function rawRequest(port: number, head: string[], body: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer')));
    socket.on('data', (c: Buffer) => (data += c.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      const text = data.slice(data.indexOf('\r\n\r\n') + 4);
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      resolve({ status, body: parsed });
    });
    socket.write([...head, `content-length: ${Buffer.byteLength(body)}`, 'connection: close', '', body].join('\r\n'));
  });
}

/**
 * A mint that fails after the provider session started used to leave a live, billed orphan.
 * A Host header that cannot build the media URL is now refused (400 with a code) before anything starts; any failure
 * after the provider session starts closes it and bills nothing.
 */
t.test('failed mints leave nothing running and nothing billed', async (t) => {
  const sim = await startVoiceSimulator({ usageIntervalMs: 200 });
  t.teardown(() => sim.close());
  const rig = await startFaultRig(t, { env: { ...FAULT_ENV, VOICE_PROVIDER_URL: sim.url } });
  const { app } = rig;
  const { owner, assistant } = await voiceSetup(app);
  const body = JSON.stringify({ assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] });

  await t.test('two Host headers: 400 VOICE_HOST_INVALID, no provider session', async (t) => {
    const before = sim.stats.sessionsStarted;
    const res = await rawRequest(
      app.port,
      [
        'POST /api/v1/voice/sessions HTTP/1.1',
        'host: a.example',
        'host: b.example',
        'content-type: application/json',
        `authorization: Bearer ${owner.secret}`,
      ],
      body,
    );
    t.equal(res.status, 400, 'a clear 400, not a 500');
    t.equal(res.body.code, 'VOICE_HOST_INVALID');
    t.equal(sim.stats.sessionsStarted, before, 'no provider session was started');
    for (const host of ['', 'exa mple.com', 'a.example/evil', 'a.example:99999999']) {
      const junk = await rawRequest(
        app.port,
        [
          'POST /api/v1/voice/sessions HTTP/1.1',
          `host: ${host}`,
          'content-type: application/json',
          `authorization: Bearer ${owner.secret}`,
        ],
        body,
      );
      t.not(junk.status, 500, `Host "${host}": no 500 (${junk.status})`);
      t.not(junk.status, 200, `Host "${host}": not minted`);
    }
    t.equal(sim.stats.sessionsStarted, before, 'still none started');
    const good = await rawRequest(
      app.port,
      [
        'POST /api/v1/voice/sessions HTTP/1.1',
        'host: voice.example:8443',
        'content-type: application/json',
        `authorization: Bearer ${owner.secret}`,
      ],
      body,
    );
    t.equal(good.status, 200, 'one valid Host mints');
    t.match(
      good.body.stream?.url,
      /^ws:\/\/voice\.example:8443\/api\/v1\/voice\/sessions\/vs_[^/]+\/stream\?token=/,
      'the media URL is built from it',
    );
    await timedRequest(`${app.url}/api/v1/voice/sessions/${good.body.sessionId}/end`, {
      json: {},
      headers: bearer(owner.secret),
    });
  });

  await t.test('the store fails after the provider session started: closed, released, nothing billed', async (t) => {
    const before = sim.stats.sessionsStarted;
    rig.redisProxy.stall();
    const res = await timedRequest(`${app.url}/api/v1/voice/sessions`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...bearer(owner.secret) },
    });
    rig.redisProxy.heal();
    t.equal(res.status, 503, 'the ownership record could not be written: 503');
    t.equal(res.body?.code, 'DEPENDENCY_UNAVAILABLE');
    t.equal(sim.stats.sessionsStarted, before + 1, 'the provider session had started');
    const deadline = Date.now() + 5000;
    while (sim.stats.sessionsActive > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    t.equal(sim.stats.sessionsActive, 0, 'and was closed: no live orphan at the provider');
    const rows = await rig.database
      .sql`select state from voice_sessions where account_id = ${owner.accountId} and state = 'active'`;
    t.equal(rows.length, 0, 'no active session row');
    const open = await rig.database
      .sql`select status from usage_reservations where account_id = ${owner.accountId} and kind = 'voice' and status = 'open'`;
    t.equal(open.length, 0, 'no grant left open');
    const [balance] = await rig.database
      .sql`select voice_seconds_used, voice_seconds_reserved from usage_balances where account_id = ${owner.accountId}`;
    t.equal(balance!.voiceSecondsReserved, 0, 'nothing reserved');
  });
});

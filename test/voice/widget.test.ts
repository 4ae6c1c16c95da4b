import t from 'tap';
import type { VoiceQuota } from '../../src/voice/index.js';
import {
  heartbeat,
  heartbeatUntil,
  mintAsWidget,
  ndjsonReader,
  openGate,
  ORIGIN,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
  type Minted,
  type VoiceTestApp,
} from './helpers.js';

function endAsWidget(app: VoiceTestApp, sessionId: string, visitorId = 'visitor-0001', origin = ORIGIN) {
  return post(app.url, `/api/v1/voice/sessions/${sessionId}/end`, { visitorId }, { origin });
}

t.test('keyless mint under the widget policy; consent always required; refusals are voice_unavailable', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { voice: { recording: 'on', requireConsent: false } });

  let res = await mintAsWidget(app, assistant, { recordingConsent: undefined });
  t.equal(res.status, 400, 'a recorded widget call needs consent even when the assistant does not require it');
  res = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['playback_gate'] },
    { origin: 'https://evil.example' },
  );
  t.equal(res.status, 403, 'Origin not on the allowlist');
  t.equal(res.body.code, 'WIDGET_ORIGIN_NOT_ALLOWED');
  res = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.id, capabilities: ['playback_gate'] },
    { origin: ORIGIN },
  );
  t.equal(res.status, 404, 'keyless callers use the public id only');

  res = await mintAsWidget(app, assistant);
  t.equal(res.status, 200);
  t.match(res.body, { recording: { enabled: true, consented: true }, heartbeatIntervalMs: 5000 });
  t.equal(res.headers.get('access-control-allow-origin'), ORIGIN, 'CORS for the widget');
  const [row] = await app.database
    .sql`select source, visitor_id, recording_consent from voice_sessions where id = ${res.body.sessionId}`;
  t.match(row, { source: 'widget', visitorId: 'visitor-0001', recordingConsent: true });

  const disabled = await voiceAssistant(app, owner, { voice: { enabled: false } });
  res = await mintAsWidget(app, disabled);
  t.equal(res.status, 403);
  t.equal(res.body.reason, 'voice_unavailable', 'voice disabled reads as voice_unavailable to visitors');
  const unlocked = await voiceAssistant(app, owner, { instructions: '[sim:lock-unconfirmed]' });
  res = await mintAsWidget(app, unlocked);
  t.equal(res.status, 502);
  t.equal(res.body.reason, 'voice_unavailable');
});

t.test('a newer widget session of the same visitor supersedes the older one', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const first = (await mintAsWidget(app, assistant)).body as Minted;
  const gate = ndjsonReader(await openGate(app, first));
  t.match(await gate.next(), { type: 'gate' });
  const other = (await mintAsWidget(app, assistant, { visitorId: 'visitor-0002' })).body as Minted;
  const second = (await mintAsWidget(app, assistant)).body as Minted;
  t.same(await gate.next(), { type: 'end', endReason: 'superseded' }, "the older session's gate says superseded");
  const hb = await waitFor(async () => {
    const r = await heartbeat(app, first);
    return r.body.status === 'ended' ? r.body : undefined;
  }, 'older ended');
  t.equal(hb.endReason, 'superseded');
  t.equal((await heartbeat(app, second)).body.status, 'healthy', 'the newer session lives');
  t.equal((await heartbeat(app, other)).body.status, 'healthy', 'another visitor is untouched');
  t.match((await endAsWidget(app, first.sessionId)).body, { status: 'ended', endReason: 'superseded' });
  t.equal((await endAsWidget(app, second.sessionId, 'visitor-9999')).status, 404, 'another visitor cannot end it');
  t.equal(
    (await endAsWidget(app, second.sessionId, 'visitor-0001', 'https://evil.example')).status,
    403,
    'nor another site',
  );
  t.match((await endAsWidget(app, second.sessionId)).body, { status: 'ended', endReason: null });
});

t.test(
  'widget mappings: heartbeat_lost, control_lost, shutdown -> disconnected; usage_limit -> voice_unavailable',
  async (t) => {
    let allow = true;
    const quota: VoiceQuota = {
      admit: async () => undefined,
      extend: async () => allow,
      settle: async () => undefined,
      release: async () => undefined,
    };
    const app = await startVoiceApp(t, { voice: { quota, limits: { quotaCheckEveryMs: 5000 } } });
    const owner = await ownerWithVoice(app);
    const assistant = await voiceAssistant(app, owner);

    const silent = (await mintAsWidget(app, assistant, { visitorId: 'visitor-hb-01' })).body as Minted;
    const gate = ndjsonReader(await openGate(app, silent));
    await gate.next();
    app.clock.advance(45_000);
    let line = await gate.next();
    while (line.type === 'keepalive') line = await gate.next();
    t.same(line, { type: 'end', endReason: 'disconnected' }, 'heartbeat_lost shows as disconnected on the gate');
    t.match((await endAsWidget(app, silent.sessionId, 'visitor-hb-01')).body, { endReason: 'disconnected' });
    const [row] = await app.database.sql`select end_reason from voice_sessions where id = ${silent.sessionId}`;
    t.equal(row!.endReason, 'heartbeat_lost', 'stored as what happened');

    const dropping = await voiceAssistant(app, owner, { instructions: '[sim:drop-after=200,refuse-reconnect]' });
    const lost = (await mintAsWidget(app, dropping, { visitorId: 'visitor-cl-01' })).body as Minted;
    t.equal((await heartbeatUntil(app, lost, 'ended')).endReason, 'disconnected', 'control_lost shows as disconnected');

    const metered = (await mintAsWidget(app, assistant, { visitorId: 'visitor-ul-01' })).body as Minted;
    allow = false;
    t.equal(
      (await heartbeatUntil(app, metered, 'ended', 5000)).endReason,
      'voice_unavailable',
      'usage_limit shows as voice_unavailable',
    );
    allow = true;

    const draining = (await mintAsWidget(app, assistant, { visitorId: 'visitor-sd-01' })).body as Minted;
    const drainingGate = ndjsonReader(await openGate(app, draining));
    await drainingGate.next();
    const closing = app.app.close(2000);
    t.same(await drainingGate.next(), { type: 'end', endReason: 'disconnected' }, 'shutdown shows as disconnected');
    await closing;
  },
);

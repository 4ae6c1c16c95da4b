import t from 'tap';
import { dashboardHeaders, login } from '../helpers/identity.js';
import { phoneMint } from '../telephony/carrier.js';
import {
  heartbeat,
  live,
  mintAsWidget,
  ownerWithVoice,
  post,
  startVoiceApp,
  voiceAssistant,
  waitFor,
  type Minted,
} from './helpers.js';

/**
 * Who sees which end reason: the owner's calls (API key, playground, phone) show the true reason wherever it is read
 * (live, from the five-minute final answer, from the database once that is gone); only widget visitors see the
 * masked one (control_lost -> disconnected).
 */
t.test('an end reason reads the same live and from the database, per audience', async (t) => {
  const app = await startVoiceApp(t);
  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner);
  const cookie = await login(app.url, owner.email, owner.password);
  const playground = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.id, capabilities: ['heartbeat', 'playback_gate'], source: 'playground' },
    dashboardHeaders(app.url, cookie),
  );
  t.equal(playground.status, 200, JSON.stringify(playground.body));
  const phone = await phoneMint(app, owner, assistant);
  const widget = await mintAsWidget(app, assistant);
  t.equal(widget.status, 200, JSON.stringify(widget.body));

  const calls: [string, Minted, string][] = [
    ['playground', playground.body as Minted, 'control_lost'],
    ['phone', phone, 'control_lost'],
    ['widget', widget.body as Minted, 'disconnected'],
  ];
  for (const [, minted] of calls) await live(app, minted.sessionId).end('control_lost');
  for (const [what, minted, shown] of calls) {
    const fromMemory = await heartbeat(app, minted);
    t.equal(fromMemory.body.endReason, shown, `${what}: the final answer says ${shown}`);
    await app.deps.store.delete(`voice:final:${minted.sessionId}`);
    const fromRow = await waitFor(async () => {
      const res = await heartbeat(app, minted);
      return res.body.status === 'ended' ? res.body : undefined;
    }, `${what}: read back`);
    t.equal(fromRow.endReason, shown, `${what}: read back from the database it still says ${shown}`);
  }
});

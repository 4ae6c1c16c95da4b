import t from 'tap';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { voiceAssistant, waitFor } from '../voice/helpers.js';
import { addNumber, callParams, callWebhook, streamOfTwiml } from './carrier.js';

/**
 * A burst of calls on a busy instance: the call webhook takes a slot of the voice mints' admission pool like any
 * mint. With one slot and no queue, a call arriving while another is being answered (the provider takes 1.5 s to
 * start it) hears the neutral spoken refusal: a 200 with TwiML, never a 5xx the carrier would read out.
 */

t.test('a call while the only mint slot is taken hears the neutral refusal, not an error', async (t) => {
  const sim = await startVoiceSimulator({ defaultFaults: 'slow-start=1500' });
  t.teardown(() => sim.close());
  const app = await startTestApp(t, {
    env: { VOICE_PROVIDER_URL: sim.url, ADMISSION_MINT_MAX_IN_FLIGHT: '1', ADMISSION_MINT_QUEUE_PER_TENANT: '0' },
  });
  const owner = await createOwner(app.database.sql);
  const number = await addNumber(app, owner, await voiceAssistant(app, owner));
  const first = callWebhook(app, callParams(number.phoneNumber));
  // The first call holds the slot while its provider session starts (slowly); the second arrives meanwhile.
  await waitFor(() => sim.stats.connections > 0, 'the first call to be starting at the provider');
  const second = await callWebhook(app, callParams(number.phoneNumber));
  t.equal(second.status, 200, 'the carrier gets TwiML');
  t.match(second.text, /<Say>[^<]+<\/Say><Hangup\/>/, 'a short spoken refusal, then hang up');
  t.notMatch(second.text, /plan|billing|usage|quota|limit|overload|busy/i, 'that names nothing of the service');
  const answered = await first;
  t.equal(answered.status, 200);
  t.ok(streamOfTwiml(answered.text), 'the first call is answered with its stream');
});

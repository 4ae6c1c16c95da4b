import t, { type Test } from 'tap';
import { bearer } from '../helpers/identity.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';
import {
  endWithKey,
  live,
  mintWithKey,
  ownerWithVoice,
  startVoiceApp,
  voiceAssistant,
  waitFor,
} from '../voice/helpers.js';

const TOKEN = 'metrics-token-for-the-test-0123456789';

/** A sample's value by name and label text inside the braces (the instance_id label aside); 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const line = text
    .split('\n')
    .map((l) =>
      l
        .replace(/instance_id="[^"]*",?/, '')
        .replace(',}', '}')
        .replace('{}', ''),
    )
    .find((l) => l.startsWith(`${name}${labels} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const WORK = 'parley_voice_relay_residence_seconds';
const WAIT = 'parley_voice_relay_append_wait_seconds';
const IN = '{direction="caller_to_provider"}';
const OUT = '{direction="provider_to_caller"}';

/**
 * One echoed call (the simulator sends every caller frame back as assistant audio, the gate open): 20 caller frames
 * in, their echo out. Returns the scrape once the relay timed all 20 caller frames and some assistant audio.
 */
async function echoCall(t: Test, env: Record<string, string>): Promise<string> {
  const app = await startVoiceApp(t, { env: { METRICS_TOKEN: TOKEN, ...env } });
  const scrape = async () => (await fetch(`${app.url}/metrics`, { headers: bearer(TOKEN) })).text();
  const before = await scrape();
  t.match(before, new RegExp(`^# TYPE ${WORK} histogram$`, 'm'), 'the working residence is a histogram');
  t.equal(sample(before, `${WORK}_count`, IN), 0, 'nothing timed before a call');

  const owner = await ownerWithVoice(app);
  const assistant = await voiceAssistant(app, owner, { instructions: 'Echo. [sim:echo=silent]' });
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  await media.waitText((e) => e.type === 'state', 'the first state');
  live(app, minted.sessionId).gate.decide('social');
  await media.waitText((e) => e.type === 'state' && e.gate === 'open', 'the gate to open');
  for (let i = 0; i < 20; i++) media.send(Buffer.alloc(960, i));
  await waitFor(() => (media.binaryBytes() >= 20 * 960 ? true : undefined), 'the echo of every frame');
  // The end flushes a partial window; every caller frame is then timed.
  t.equal((await endWithKey(app, owner, minted.sessionId)).status, 200);
  await media.closed;
  const text = await waitFor(async () => {
    const text = await scrape();
    return sample(text, `${WORK}_count`, IN) >= 20 ? text : undefined;
  }, 'all 20 caller frames timed');
  return text!;
}

t.test('a call with the default config: working residence per direction, the coalescing wait apart', async (t) => {
  const text = await echoCall(t, {});
  const timedIn = sample(text, `${WORK}_count`, IN);
  t.equal(timedIn, 20, 'every caller frame timed once (to the provider socket)');
  t.ok(sample(text, `${WORK}_count`, OUT) > 0, 'assistant audio timed (to the caller socket)');
  t.equal(
    sample(text, `${WORK}_bucket`, '{direction="caller_to_provider",le="+Inf"}'),
    timedIn,
    'buckets are cumulative up to +Inf = count',
  );
  t.equal(sample(text, `${WAIT}_count`), 20, 'each caller frame also has its wait, as its own figure');
  // A frame goes at once while the provider link has nothing in flight (a loopback socket takes each write at once).
  t.ok(sample(text, `${WAIT}_bucket`, '{le="0.000025"}') >= 10, 'most frames did not wait at all');
  t.ok(sample(text, `${WORK}_sum`, IN) >= 0, 'working time summed');
});

t.test('VOICE_PROVIDER_APPEND_MS=0: one append per frame, never held, so no wait recorded', async (t) => {
  const text = await echoCall(t, { VOICE_PROVIDER_APPEND_MS: '0' });
  t.equal(sample(text, `${WORK}_count`, IN), 20, 'every caller frame timed');
  t.ok(sample(text, `${WORK}_count`, OUT) >= 20, 'every echoed frame timed on its way to the caller');
  t.equal(sample(text, `${WAIT}_count`), 0, 'no coalescing, no wait');
});

import t, { type Test } from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchBrowser, makeSpeechWav } from '../helpers/browser.js';

/**
 * The browser harness itself: Debian's chromium hears the espeak-ng WAV through its fake microphone (not silence),
 * and a denied microphone is an error the page sees, not a hang.
 */
async function blankOrigin(t: Test): Promise<string> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>mic</title>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections(); // the browser keeps connections alive
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/**
 * Peak level of the microphone over ~1.5 s, measured in the page with an AnalyserNode. Page code is a string: the
 * project's typecheck has no DOM library (web/ has its own tsconfig).
 */
const MIC_PEAK = `(async () => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const ctx = new AudioContext();
  const analyser = ctx.createAnalyser();
  ctx.createMediaStreamSource(stream).connect(analyser);
  const data = new Float32Array(analyser.fftSize);
  let peak = 0;
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 50));
    analyser.getFloatTimeDomainData(data);
    for (const v of data) peak = Math.max(peak, Math.abs(v));
  }
  stream.getTracks().forEach((track) => track.stop());
  await ctx.close();
  return peak;
})()`;

t.test('the fake microphone plays the espeak-ng WAV into the page', async (t) => {
  const wav = await makeSpeechWav(t, 'Hello, what are your opening hours?');
  const browser = await launchBrowser(t, { fakeAudioWav: wav });
  const page = await browser.newPage();
  await page.goto(await blankOrigin(t));
  const peak = (await page.evaluate(MIC_PEAK)) as number;
  t.ok(peak > 0.05, `the page hears speech (peak ${peak.toFixed(3)})`);
  t.same(browser.errors, [], 'no console or page errors');
});

t.test('a denied microphone is a NotAllowedError in the page', async (t) => {
  const browser = await launchBrowser(t, { microphone: 'deny' });
  const page = await browser.newPage();
  await page.goto(await blankOrigin(t));
  const name = await page.evaluate(`Promise.race([
    navigator.mediaDevices.getUserMedia({ audio: true }).then(() => 'granted', (err) => err.name),
    new Promise((r) => setTimeout(() => r('no answer in 5 s'), 5000)),
  ])`);
  t.equal(name, 'NotAllowedError');
});

import t from 'tap';
import { request } from 'node:http';
import WebSocket from 'ws';
import { carrierSignature } from '../../sdk/src/cli/phone/carrier.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { bearer, createOwner, type TestOwner } from '../helpers/identity.js';
import { live, voiceAssistant, waitFor } from '../voice/helpers.js';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  addNumber,
  callParams,
  callWebhook,
  mulawSpeech,
  openCarrierStream,
  streamOfTwiml,
} from './carrier.js';

/**
 * Phone calls against what a stranger or a careless deployment does to them: a replayed media-stream upgrade, a
 * carrier webhook with a NUL in its AccountSid, a normal hang-up read back, and numbers registered behind a TLS proxy.
 * Real Parley, Postgres, Redis and the voice simulator.
 */

let app: TestApp;
let owner: TestOwner;

t.before(async () => {
  app = await startTestApp(t);
  owner = await createOwner(app.database.sql);
});

async function answered(to: string) {
  const answer = await callWebhook(app, callParams(to));
  const stream = streamOfTwiml(answer.text);
  if (stream === undefined) throw new Error(`not answered: ${answer.status} ${answer.text}`);
  return stream;
}

/** A POST with headers fetch would not send as given (Host): what a proxy forwards. */
function rawPost(
  base: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A raw upgrade with the carrier's headers as they were seen: the status it got, or 101 and how it closed. */
function replayUpgrade(url: string, signature: string): Promise<{ status: number; closed?: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'x-twilio-signature': signature }, perMessageDeflate: false });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    ws.once('error', reject);
    ws.once('open', () => {
      ws.on('error', () => undefined);
      const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
      resolve({ status: 101, closed });
      ws.close();
    });
  });
}

t.test('a replayed media-stream upgrade is refused and the live call goes on', async (t) => {
  const assistant = await voiceAssistant(app, owner);
  const number = await addNumber(app, owner, assistant);
  const stream = await answered(number.phoneNumber);
  const carrier = await openCarrierStream(stream.url, stream.token);
  await waitFor(() => live(app, stream.sessionId).joined || undefined, 'the carrier stream to start');

  // Whoever saw the carrier's upgrade replays its headers (the signature is over the URL alone).
  const replay = await replayUpgrade(stream.url, carrierSignature(AUTH_TOKEN, stream.url));
  t.not(replay.status, 101, `the second upgrade is refused (got ${replay.status})`);
  if (replay.closed) await replay.closed;

  for (const frame of mulawSpeech(10)) carrier.media(frame);
  t.ok(carrier.stream.open, "the carrier's stream is still open");
  t.equal(live(app, stream.sessionId).status, 'active', 'the call goes on');
  carrier.send({ event: 'stop', streamSid: carrier.stream.streamSid, stop: {} });
  await carrier.closed;
});

t.test('a normal carrier hang-up is stored as the caller ending the call', async (t) => {
  const assistant = await voiceAssistant(app, owner);
  const number = await addNumber(app, owner, assistant);
  const stream = await answered(number.phoneNumber);
  const carrier = await openCarrierStream(stream.url, stream.token);
  await waitFor(() => live(app, stream.sessionId).joined || undefined, 'the carrier stream to start');
  carrier.send({ event: 'stop', streamSid: carrier.stream.streamSid, stop: {} });
  await carrier.closed;
  const row = await waitFor(async () => {
    const [r] = await app.database.sql<{ state: string; endReason: string | null; endedBy: string }[]>`
      select state, end_reason, ended_by from voice_sessions where id = ${stream.sessionId}`;
    return r?.state === 'ended' ? r : undefined;
  }, 'the call to be settled');
  t.same({ endReason: row!.endReason, endedBy: row!.endedBy }, { endReason: null, endedBy: 'client' });
  const timeline = await fetch(`${app.url}/api/v1/voice/sessions/${stream.sessionId}/timeline`, {
    headers: bearer(owner.secret),
  });
  const body = (await timeline.json()) as { transport: string; end?: { fault: string | null } };
  t.equal(body.transport, 'phone', 'the timeline names the phone');
  t.equal(body.end?.fault ?? null, null, 'nobody is at fault for a hang-up');
});

t.test('a webhook whose AccountSid holds a NUL is refused 403, never a 500', async (t) => {
  const errorsBefore = app.logs.lines.filter((e) => Number(e['level']) >= 50).length;
  const res = await fetch(`${app.url}/api/v1/telephony/twilio/voice`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'AccountSid=%00&To=%2B15550100123&From=%2B15550100124&CallSid=CA1',
  });
  const text = await res.text();
  t.equal(res.status, 403, text);
  t.match(text, /TELEPHONY_SIGNATURE_INVALID/);
  t.equal(app.logs.lines.filter((e) => Number(e['level']) >= 50).length, errorsBefore, 'no error is logged');
});

t.test('behind a TLS proxy without PUBLIC_URL', async (t) => {
  const number = { phoneNumber: '+15550177001', provider: 'twilio', accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN };
  const proxied = await startTestApp(t, { env: { TRUST_PROXY: 'true' } });
  const proxiedOwner = await createOwner(proxied.database.sql);
  const assistant = await voiceAssistant(proxied, proxiedOwner);
  const json = { 'content-type': 'application/json' };
  const forwarded = { host: 'voice.example', 'x-forwarded-proto': 'https' };
  const created = await rawPost(
    proxied.url,
    '/api/v1/phone-numbers',
    { ...json, ...bearer(proxiedOwner.secret), ...forwarded },
    JSON.stringify({ ...number, assistantId: assistant.publicId }),
  );
  t.equal(created.status, 201, created.text);
  const voiceUrl = JSON.parse(created.text).voiceUrl;
  t.equal(
    voiceUrl,
    'https://voice.example/api/v1/telephony/twilio/voice',
    "a trusted proxy's scheme is the one the carrier signs over",
  );
  // The carrier signs over the https URL it called; the proxy forwards it as http.
  const params = callParams(number.phoneNumber);
  const res = await rawPost(
    proxied.url,
    '/api/v1/telephony/twilio/voice',
    {
      'content-type': 'application/x-www-form-urlencoded',
      ...forwarded,
      'x-twilio-signature': carrierSignature(AUTH_TOKEN, voiceUrl, params),
    },
    new URLSearchParams(params).toString(),
  );
  t.equal(res.status, 200, res.text);
  t.match(res.text, /<Stream url="wss:\/\/voice\.example\//, 'the stream is wss under the same host');

  // Not trusted, no PUBLIC_URL, a public host: the carrier would sign over a scheme nobody knows, so no number.
  const plainOwner = await createOwner(app.database.sql);
  const plainAssistant = await voiceAssistant(app, plainOwner);
  const refused = await rawPost(
    app.url,
    '/api/v1/phone-numbers',
    { ...json, ...bearer(plainOwner.secret), host: 'voice.example' },
    JSON.stringify({ ...number, phoneNumber: '+15550177002', assistantId: plainAssistant.publicId }),
  );
  t.equal(refused.status, 409, refused.text);
  const body = JSON.parse(refused.text);
  t.equal(body.code, 'TELEPHONY_PUBLIC_URL_REQUIRED');
  t.match(body.error ?? body.message, /PUBLIC_URL/);
  t.ok(
    app.logs.lines.some((e) => /PUBLIC_URL/.test(String(e['msg'])) && e['level'] === 40),
    'start-up warned that carrier webhooks need PUBLIC_URL',
  );
});

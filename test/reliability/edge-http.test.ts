import t from 'tap';
import { bearer, createOwner } from '../helpers/identity.js';
import { buildRaw, sendRaw } from '../fuzz/raw.js';
import { mediaUrl, openMedia } from '../voice/media-client.js';
import { mintWithKey, post, startVoiceApp, voiceAssistant } from '../voice/helpers.js';

/** The smaller edge defects, each as a user of the HTTP and media surface sees it. */
const BODY_READ_TIMEOUT_MS = 400;
const app = await startVoiceApp(t, { env: { BODY_READ_TIMEOUT_MS: String(BODY_READ_TIMEOUT_MS) } });
const owner = await createOwner(app.database.sql);
const assistant = await voiceAssistant(app, owner);
const key = bearer(owner.secret);
const ready = async () => (await fetch(`${app.url}/readyz`)).status;

t.test(
  'a body shorter than its Content-Length is answered 408 with the error body, then the connection closes',
  async (t) => {
    const body = '{"assistantId":"';
    const bytes = buildRaw({
      requestLine: 'POST /api/v1/chat HTTP/1.1',
      headers: [
        ['host', '127.0.0.1'],
        ['content-type', 'application/json'],
        ['authorization', key.authorization!],
      ],
      body,
      contentLength: body.length + 50,
    });
    const answer = await sendRaw(app.port, { bytes, after: 'hold' }, 8000);
    t.equal(answer.timedOut, false, 'answered before uWS would close the socket silently');
    t.equal(answer.status, 408);
    const error = JSON.parse(answer.body.toString('utf8')) as { code: string; requestId: string };
    t.equal(error.code, 'HTTP_BODY_TIMEOUT');
    t.ok(error.requestId, 'the usual error body, with a request id');
    t.equal(await ready(), 200, 'the server stays healthy');
  },
);

t.test(
  'a body that arrives slowly but steadily is read whole (the deadline is between bytes, not for the whole body)',
  async (t) => {
    const body = JSON.stringify({ assistantId: assistant.id, message: 'What is the price?' });
    const head = buildRaw({
      requestLine: 'POST /api/v1/chat HTTP/1.1',
      headers: [
        ['host', '127.0.0.1'],
        ['content-type', 'application/json'],
        ['authorization', key.authorization!],
      ],
      contentLength: body.length,
    });
    const { connect } = await import('node:net');
    const status = await new Promise<number>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: app.port }, async () => {
        socket.write(head);
        for (let i = 0; i < body.length; i += 8) {
          socket.write(body.slice(i, i + 8));
          await new Promise((r) => setTimeout(r, BODY_READ_TIMEOUT_MS / 4));
        }
      });
      let text = '';
      socket.on('data', (c: Buffer) => {
        text += c.toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
        if (m) {
          socket.destroy();
          resolve(Number(m[1]));
        }
      });
      socket.on('error', reject);
    });
    t.equal(
      status,
      200,
      `a body taking ${Math.ceil(body.length / 8) * (BODY_READ_TIMEOUT_MS / 4)} ms in total was read`,
    );
  },
);

t.test(
  "malformed request lines: answered by uWS's parser itself (a documented limit), never a hang, server healthy",
  async (t) => {
    for (const line of [
      'GET /readyz HTTP/1.1 extra',
      'G\u0000T /readyz HTTP/1.1',
      'GET  /readyz HTTP/1.1',
      'GET /readyz HTTP/9.9',
    ]) {
      const answer = await sendRaw(
        app.port,
        { bytes: Buffer.from(`${line}\r\nhost: x\r\n\r\n`, 'latin1'), after: 'wait' },
        5000,
      );
      t.equal(answer.timedOut, false, `${JSON.stringify(line)}: answered or closed at once`);
      // uWS answers 505 to any request line it cannot parse; Parley's code never sees the request (README,
      // Reliability).
      t.ok(
        answer.status === undefined || answer.status === 400 || answer.status === 505,
        `${JSON.stringify(line)}: ${answer.status}`,
      );
      t.ok(answer.closed, 'the connection is closed');
    }
    t.equal(await ready(), 200);
  },
);

t.test('chat bodies: 256 KiB limit answered 413 HTTP_BODY_TOO_LARGE, declared or streamed', async (t) => {
  const big = JSON.stringify({ assistantId: assistant.id, message: 'x'.repeat(300 * 1024) });
  const declared = await fetch(`${app.url}/api/v1/chat`, {
    method: 'POST',
    headers: { ...key, 'content-type': 'application/json' },
    body: big,
  });
  t.equal(declared.status, 413);
  const body = (await declared.json()) as { code: string; details: { limitBytes: number } };
  t.equal(body.code, 'HTTP_BODY_TOO_LARGE');
  t.equal(body.details.limitBytes, 256 * 1024, 'the answer names the chat limit');
  const streamed = buildRaw({
    requestLine: 'POST /api/v1/chat HTTP/1.1',
    headers: [
      ['host', '127.0.0.1'],
      ['content-type', 'application/json'],
      ['authorization', key.authorization!],
      ['transfer-encoding', 'chunked'],
    ],
    body: `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    contentLength: 'omit',
  });
  const answer = await sendRaw(app.port, { bytes: streamed, after: 'wait' }, 5000);
  t.equal(answer.status, 413, 'a chunked body over the limit is 413 too');
});

t.test('duplicate capabilities count once', async (t) => {
  const res = await post(
    app.url,
    '/api/v1/voice/sessions',
    { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate', 'heartbeat', 'playback_gate'] },
    key,
  );
  t.equal(res.status, 200);
  const [row] = await app.database.sql<
    Array<{ capabilities: string[] }>
  >`select capabilities from voice_sessions where id = ${res.body.sessionId}`;
  t.same([...row!.capabilities].sort(), ['heartbeat', 'playback_gate'], 'stored once each');
  t.equal((await post(app.url, `/api/v1/voice/sessions/${res.body.sessionId}/end`, {}, key)).status, 200);
});

t.test('a media frame over the limit closes with 1009 and a reason, not 1006', async (t) => {
  const minted = await mintWithKey(app, owner, assistant);
  const media = await openMedia(mediaUrl(app, minted));
  media.send(Buffer.alloc(200 * 1024));
  const closed = await media.closed;
  t.equal(closed.code, 1009);
  t.equal(closed.reason, 'frame too large');
  t.equal((await post(app.url, `/api/v1/voice/sessions/${minted.sessionId}/end`, {}, key)).status, 200);
});

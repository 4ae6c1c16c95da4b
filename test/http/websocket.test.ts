import t from 'tap';
import WebSocket from 'ws';
import { AppError } from '../../src/errors/index.js';
import { reply, type RealtimeSocket, type SocketRoute } from '../../src/http/index.js';
import { startShell } from '../helpers/shell.js';
import { waitFor } from '../helpers/wait.js';

interface Conn {
  user: string;
}

function echoRoute(events: string[]): SocketRoute<Conn> {
  return {
    path: '/rooms/:roomId/socket',
    maxPayloadLength: 1024,
    maxBackpressure: 64 * 1024,
    idleTimeoutSeconds: 30,
    async upgrade(req) {
      await new Promise((r) => setTimeout(r, 5)); // authentication is asynchronous
      const token = req.query['token'];
      if (token === 'forbidden') throw new AppError('ROOM_FORBIDDEN', 403, 'Not your room.');
      if (token !== 'good')
        return { refuse: reply.json({ error: 'bad token', code: 'ROOM_TOKEN', requestId: req.requestId }, 401) };
      return { accept: { user: `${req.params['roomId']}:${token}` } };
    },
    open(socket) {
      events.push(`open ${socket.data.user}`);
      socket.send(JSON.stringify({ hello: socket.data.user }), false);
    },
    message(socket: RealtimeSocket<Conn>, data, binary) {
      const copy = Buffer.from(data.slice(0));
      socket.cork(() => {
        socket.send(copy, binary);
      });
    },
    close(socket, code) {
      events.push(`close ${socket.data.user} ${code}`);
    },
  };
}

t.test('the WebSocket upgrade seam authenticates, echoes and reports closes', async (t) => {
  const events: string[] = [];
  const { port } = await startShell(t, { routes: [], sockets: [echoRoute(events)] });
  const base = `ws://127.0.0.1:${port}/rooms/r1/socket`;

  const refused = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`${base}?token=bad`);
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => undefined);
  });
  t.equal(refused, 401, 'refused upgrade answers the HTTP reply');
  const forbidden = await new Promise<number>((resolve) => {
    const ws = new WebSocket(`${base}?token=forbidden`);
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('error', () => undefined);
  });
  t.equal(forbidden, 403, 'an AppError from upgrade maps to its status');

  // uWS bug, fixed upstream (uNetworking/uWebSockets#1928, #1929) but not in the uws-pack we pin: after an upgrade
  // made inside res.cork (the only warning-free way to upgrade after async authentication), cork's post-response
  // check may read the new WebSocket's memory as HTTP state and close the socket at once (1006, seen about once in
  // a few hundred connections under load). Routes that can decide without waiting avoid it (next test; the media
  // socket does); this route awaits, so one such close is retried here, and a second fails the test.
  let ws!: WebSocket;
  let messages: Array<{ data: Buffer; binary: boolean }> = [];
  for (let attempt = 1; ; attempt++) {
    ws = new WebSocket(`${base}?token=good`);
    const received: Array<{ data: Buffer; binary: boolean }> = [];
    let droppedAtOnce = false;
    ws.on('message', (data: Buffer, binary: boolean) => received.push({ data, binary }));
    ws.on('close', (code) => (droppedAtOnce = code === 1006 && received.length < 3));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(Buffer.from([1, 2, 3, 4]));
    ws.send('text frame');
    await waitFor(() => received.length >= 3 || droppedAtOnce, 'the greeting and both echoes');
    messages = received;
    if (!droppedAtOnce) break;
    t.ok(attempt < 2, 'a fresh socket was dropped right after its upgrade (the uWS cork bug): retried once');
    if (attempt >= 2) return;
    events.length = 0;
  }
  t.same(JSON.parse(messages[0]!.data.toString()), { hello: 'r1:good' });
  t.same([...messages[1]!.data], [1, 2, 3, 4]);
  t.equal(messages[1]!.binary, true);
  t.equal(messages[2]!.data.toString(), 'text frame');
  t.equal(messages[2]!.binary, false);

  const closed = new Promise<number>((resolve) => ws.once('close', resolve));
  ws.send(Buffer.alloc(2048)); // over maxPayloadLength: uWS closes the socket
  t.equal(await closed, 1006, 'oversized frame closes the socket');
  await waitFor(() => events.length >= 2, 'the close event');
  t.same(events.slice(0, 1), ['open r1:good']);
  t.match(events[1], /^close r1:good /);
});

t.test('an upgrade decided without waiting is applied in uWS’s own callback: accept, refuse and throw', async (t) => {
  const events: string[] = [];
  const route = echoRoute(events);
  route.path = '/now/:roomId/socket';
  route.upgrade = (req) => {
    const token = req.query['token'];
    if (token === 'forbidden') throw new AppError('ROOM_FORBIDDEN', 403, 'Not your room.');
    if (token !== 'good')
      return { refuse: reply.json({ error: 'bad token', code: 'ROOM_TOKEN', requestId: req.requestId }, 401) };
    return { accept: { user: `${req.params['roomId']}:now` } };
  };
  const { port } = await startShell(t, { routes: [], sockets: [route] });
  const base = `ws://127.0.0.1:${port}/now/r2/socket`;
  const statusOf = (token: string): Promise<number> =>
    new Promise((resolve) => {
      const ws = new WebSocket(`${base}?token=${token}`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
  t.equal(await statusOf('bad'), 401, 'a synchronous refusal answers the HTTP reply');
  t.equal(await statusOf('forbidden'), 403, 'a synchronous AppError maps to its status');
  for (let i = 0; i < 20; i++) {
    const ws = new WebSocket(`${base}?token=good`);
    const received: Buffer[] = [];
    ws.on('message', (data: Buffer) => received.push(data));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(Buffer.from([i]));
    await waitFor(() => received.length >= 2, `socket ${i}: the greeting and the echo`);
    t.same(JSON.parse(received[0]!.toString()), { hello: 'r2:now' }, `socket ${i}: greeted`);
    t.same([...received[1]!], [i], `socket ${i}: echoed`);
    ws.close();
  }
});

import t from 'tap';
import { connect } from 'node:net';
import { ndjsonLine } from '../../src/http/index.js';
import { ndjsonRoute, startShell } from '../helpers/shell.js';

import { waitFor } from '../helpers/wait.js';

t.test('a slow NDJSON reader holds the producer back, then gets every line in order', async (t) => {
  const line = ndjsonLine({ type: 'chunk', pad: 'x'.repeat(64 * 1024) });
  const total = 400; // ~26 MB if it were all buffered
  let written = 0;
  let waited = 0;
  let finished = false;
  const { port } = await startShell(t, {
    routes: [
      ndjsonRoute('/stream', async (sink) => {
        for (let i = 0; i < total; i++) {
          const started = Date.now();
          const pending = sink.write(line);
          const ok = await pending;
          if (Date.now() - started > 5) waited++;
          if (!ok) return;
          written++;
        }
        finished = true;
      }),
    ],
  });

  const socket = connect(port, '127.0.0.1');
  socket.pause(); // a reader that does not read
  socket.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((r) => setTimeout(r, 400));
  t.ok(
    written < total / 2,
    `producer was held back while the client did not read (${written} of ${total} lines written)`,
  );
  t.notOk(finished, 'producer has not finished');

  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.resume();
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (finished && received.includes('\r\n0\r\n\r\n')) {
        clearInterval(check);
        resolve();
      }
    }, 20);
  });
  socket.destroy();
  t.ok(waited > 0, 'some writes waited for drain');
  t.equal(written, total, 'every line was eventually written');
  t.match(received, /^HTTP\/1\.1 200 OK/);
  t.match(received, /content-type: application\/x-ndjson/i);
  t.equal(received.split('"type":"chunk"').length - 1, total, 'the client received every line');
});

t.test('an NDJSON stream stops cleanly when the client goes away', async (t) => {
  let stopped: (why: string) => void = () => undefined;
  const stoppedWhy = new Promise<string>((resolve) => (stopped = resolve));
  const { url, server } = await startShell(t, {
    routes: [
      ndjsonRoute('/events', async (sink) => {
        for (let seq = 0; ; seq++) {
          if (!(await sink.write(ndjsonLine({ seq })))) return stopped(sink.signal.aborted ? 'aborted' : 'closed');
          await new Promise((r) => setTimeout(r, 10));
        }
      }),
    ],
  });
  const controller = new AbortController();
  const res = await fetch(`${url}/events`, { signal: controller.signal });
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.match(new TextDecoder().decode(first.value), /\{"seq":0\}\n/, 'first line arrives as its own JSON line');
  controller.abort();
  t.equal(await stoppedWhy, 'aborted', 'producer learns the client is gone and stops');
  await waitFor(() => server.inFlight === 0, 'the stream to be counted out');
  t.equal(server.inFlight, 0, 'nothing left in flight');
});

t.test('SSE events are framed per the EventSource format', async (t) => {
  const { sseEvent } = await import('../../src/http/index.js');
  t.equal(sseEvent('token', { text: 'a\nb' }), 'event: token\ndata: {"text":"a\\nb"}\n\n');
  t.equal(sseEvent('note', 'line1\nline2'), 'event: note\ndata: line1\ndata: line2\n\n');
});

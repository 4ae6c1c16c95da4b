import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Test } from 'tap';

/**
 * A TCP fault proxy for the fault suite (test/fault/): it sits between Parley and a real dependency (Redis, PostgreSQL,
 * the voice provider simulator) on a free loopback port and injects the faults real networks have:
 *
 * - `delay(ms)`: every chunk waits `ms` before it is forwarded (order kept per direction).
 * - `stall()`: nothing is forwarded either way and new connections are held unconnected; `heal()` delivers what was
 *   held, in order (a partition that heals: TCP retransmits, nothing is lost).
 * - `holdDownstream()`: half-open: the client's bytes still reach the server, the server's replies are held (the
 *   provider link looks open, but nothing comes back); `heal()` releases them in one burst.
 * - `cut()`: every open connection is reset at once; new ones pass (a blip: a failover, a restarted pooler).
 * - `refuse()`: every open connection is reset and new ones are reset on accept (the dependency is down).
 * - `heal()`: back to passing everything.
 */
export interface FaultProxy {
  readonly port: number;
  /** `scheme://127.0.0.1:<port><rest>`: the target's URL with the proxy's address. */
  urlFor(targetUrl: string): string;
  delay(ms: number): void;
  stall(): void;
  holdDownstream(): void;
  cut(): void;
  refuse(): void;
  heal(): void;
  /** Client connections open right now. */
  readonly connections: number;
  close(): Promise<void>;
}

type Mode = 'pass' | 'stall' | 'hold-down' | 'refuse';

interface Direction {
  from: Socket;
  to: Socket;
  held: Buffer[];
  /** The tail of this direction's delayed writes (order is kept). */
  chain: Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket | undefined;
  up: Direction | undefined;
  down: Direction | undefined;
  /** Client bytes that arrived before the upstream connection existed. */
  early: Buffer[];
}

/** Starts a proxy to `target` (host:port) on 127.0.0.1:0; closed at teardown when `t` is given. */
export async function startFaultProxy(target: { host: string; port: number }, t?: Test): Promise<FaultProxy> {
  let mode: Mode = 'pass';
  let delayMs = 0;
  const pairs = new Set<Pair>();
  /** Every socket either side ever opened and not yet closed (close() destroys them all, whatever their state). */
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const reset = (socket: Socket | undefined) => {
    if (socket === undefined || socket.destroyed) return;
    socket.resetAndDestroy();
  };
  const dropPair = (pair: Pair) => {
    pairs.delete(pair);
    reset(pair.client);
    reset(pair.server);
  };

  const holds = (dir: 'up' | 'down') => mode === 'stall' || (mode === 'hold-down' && dir === 'down');

  const forward = (direction: Direction, which: 'up' | 'down', chunk: Buffer) => {
    if (holds(which)) {
      direction.held.push(chunk);
      return;
    }
    write(direction, chunk);
  };

  const write = (direction: Direction, chunk: Buffer) => {
    if (delayMs <= 0) {
      if (!direction.to.destroyed) direction.to.write(chunk);
      return;
    }
    const wait = delayMs;
    direction.chain = direction.chain.then(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            if (!direction.to.destroyed) direction.to.write(chunk);
            resolve();
          }, wait),
        ),
    );
  };

  const flush = (direction: Direction | undefined) => {
    if (direction === undefined) return;
    for (const chunk of direction.held.splice(0)) write(direction, chunk);
  };

  const link = (pair: Pair) => {
    const server = connect(target.port, target.host);
    track(server);
    server.setNoDelay(true);
    pair.server = server;
    const up: Direction = { from: pair.client, to: server, held: [...pair.early.splice(0)], chain: Promise.resolve() };
    const down: Direction = { from: server, to: pair.client, held: [], chain: Promise.resolve() };
    pair.up = up;
    pair.down = down;
    server.on('data', (chunk: Buffer) => forward(down, 'down', chunk));
    server.on('error', () => dropPair(pair));
    server.on('close', () => {
      if (!pair.client.destroyed) pair.client.end();
      pairs.delete(pair);
    });
    server.once('connect', () => {
      if (!holds('up')) flush(up);
    });
  };

  const server: Server = createServer({ noDelay: true }, (client) => {
    track(client);
    if (mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const pair: Pair = { client, server: undefined, up: undefined, down: undefined, early: [] };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (pair.up === undefined) pair.early.push(chunk);
      else if (pair.server?.connecting) pair.up.held.push(chunk);
      else forward(pair.up, 'up', chunk);
    });
    client.on('error', () => dropPair(pair));
    client.on('close', () => {
      if (pair.server && !pair.server.destroyed) pair.server.end();
      pairs.delete(pair);
    });
    // A partition: the client's connect "succeeds" at our end, but nothing reaches the dependency until it heals.
    if (mode !== 'stall') link(pair);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const proxy: FaultProxy = {
    port,
    urlFor(targetUrl) {
      const url = new URL(targetUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    delay(ms) {
      delayMs = ms;
    },
    stall() {
      mode = 'stall';
    },
    holdDownstream() {
      mode = 'hold-down';
    },
    cut() {
      for (const pair of [...pairs]) dropPair(pair);
    },
    refuse() {
      mode = 'refuse';
      for (const pair of [...pairs]) dropPair(pair);
    },
    heal() {
      mode = 'pass';
      delayMs = 0;
      for (const pair of pairs) {
        if (pair.server === undefined) {
          link(pair);
          continue;
        }
        if (!pair.server.connecting) flush(pair.up);
        flush(pair.down);
      }
    },
    get connections() {
      return pairs.size;
    },
    async close() {
      mode = 'refuse';
      for (const pair of [...pairs]) dropPair(pair);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of [...sockets]) reset(socket);
      await closed;
    },
  };
  t?.teardown(() => proxy.close());
  return proxy;
}

/** Host and port of a URL (redis://, postgres://, ws://), for {@link startFaultProxy}. */
export function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port === '' ? defaultPort : Number(parsed.port) };
}

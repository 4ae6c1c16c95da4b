import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Test } from 'tap';
import { Redis } from 'ioredis';

/**
 * A redis-server of the test's own on a free loopback port, run the way the deployment runs it
 * (`--save "" --appendonly no`: a restart loses every key). The fault suite stops, kills and restarts it;
 * the shared Redis on 6379 is never touched. Stopped at teardown.
 */
export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  /** SIGKILL and start again on the same port: every key is gone. */
  restart(): Promise<void>;
  /** SIGKILL (connections are reset; the port refuses until start()). */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** A plain client (no prefix) for assertions; closed at teardown. */
  client(): Promise<Redis>;
}

/** A TCP port nobody listens on right now (bound then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startRedisProcess(t: Test): Promise<RedisProcess> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const clients: Redis[] = [];

  const start = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    proc.stdout.on('data', (c: Buffer) => (output += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child = proc;
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const probe = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    const deadline = Date.now() + 10_000;
    try {
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`redis-server exited: ${output}`);
        try {
          if (probe.status !== 'ready') await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
        }
        if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer: ${output}`);
        await delay(50);
      }
    } finally {
      probe.disconnect();
    }
  };

  const kill = async () => {
    child?.kill('SIGKILL');
    await exited;
    child = undefined;
  };

  await start();
  t.teardown(async () => {
    for (const c of clients) c.disconnect();
    await kill();
  });
  return {
    port,
    url,
    start,
    kill,
    async restart() {
      await kill();
      await start();
    },
    async client() {
      const c = new Redis(url, { maxRetriesPerRequest: 1 });
      c.on('error', () => undefined);
      clients.push(c);
      return c;
    },
  };
}

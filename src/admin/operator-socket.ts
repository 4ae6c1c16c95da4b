import { chmod, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import { isAppError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { commands, UsageError, type Values } from './cli-commands.js';

/** Where a server running on the embedded database listens for operator commands. */
export function operatorSocketPath(dataDir: string): string {
  return join(dataDir, 'operator.sock');
}

/** What the CLI sends (one JSON line) and what it gets back (one JSON line). */
export interface OperatorRequest {
  command: string;
  values: Values;
}
export type OperatorAnswer =
  { ok: true; result: Record<string, unknown> } | { ok: false; error: string; code: string; usage: boolean };

const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * The embedded database admits one process (PGlite is a single session, so a second client on its socket would
 * interleave with the server's queries), so while the server runs, the CLI hands it its command instead. A Unix
 * socket in DATA_DIR, mode 0600: only the OS user that runs the server (and root) can connect, the same people who
 * can read the database files. Each connection carries one request and one answer.
 */
export function operatorSocket(deps: {
  sql: Sql;
  config: Pick<Config, 'DATA_DIR' | 'ADMIN_USER_IDS' | 'SELF_HOSTED'>;
  log: Logger;
}) {
  const path = operatorSocketPath(deps.config.DATA_DIR);
  let server: Server | undefined;
  const answer = async (line: string): Promise<OperatorAnswer> => {
    try {
      const request = JSON.parse(line) as OperatorRequest;
      const found =
        typeof request.command === 'string' && Object.hasOwn(commands, request.command)
          ? commands[request.command]
          : undefined;
      if (!found) throw new UsageError(`unknown command "${String(request.command)}"`);
      const work = await found.prepare((request.values ?? {}) as Values);
      const result = await work(deps.sql, [], {
        adminUserIds: deps.config.ADMIN_USER_IDS,
        selfHosted: deps.config.SELF_HOSTED,
      });
      deps.log.info({ command: request.command }, 'operator command ran');
      return { ok: true, result };
    } catch (err) {
      const usage = err instanceof UsageError || (isAppError(err) && err.status === 400);
      const code = err instanceof UsageError ? err.code : isAppError(err) ? err.code : codeOf(err);
      return { ok: false, error: err instanceof Error ? err.message : String(err), code, usage };
    }
  };
  return {
    name: 'operator socket',
    async start() {
      // A socket file left by a process that died is stale: the data-dir lock already proved we are the only one.
      await rm(path, { force: true });
      server = createServer((socket) => {
        let buffered = '';
        socket.setEncoding('utf8');
        socket.on('error', () => undefined);
        socket.on('data', (chunk: string) => {
          buffered += chunk;
          if (buffered.length > MAX_REQUEST_BYTES) return void socket.destroy();
          const end = buffered.indexOf('\n');
          if (end < 0) return;
          socket.pause();
          void answer(buffered.slice(0, end)).then((a) => socket.end(`${JSON.stringify(a)}\n`));
        });
      });
      try {
        await new Promise<void>((resolve, reject) => {
          server!.once('error', reject);
          server!.listen(path, () => resolve());
        });
        await chmod(path, 0o600);
        deps.log.info({ path }, 'operator socket listening');
      } catch (err) {
        // Not fatal (e.g. a DATA_DIR path longer than a Unix socket path may be): the CLI then says the data
        // directory is in use, as before.
        deps.log.warn({ err, path }, 'operator socket unavailable: stop the server to run the operator CLI');
        server = undefined;
      }
    },
    async stop() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      await rm(path, { force: true });
    },
  };
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(code) ? code : 'CLI_FAILED';
}

/**
 * Sends one command to a running server. Resolves undefined when no server listens there (no socket file, or a
 * stale one), so the CLI opens the database itself.
 */
export function sendToRunningServer(dataDir: string, request: OperatorRequest): Promise<OperatorAnswer | undefined> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(operatorSocketPath(dataDir));
    let buffered = '';
    let connected = false;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify(request)}\n`);
    });
    socket.on('data', (chunk: string) => (buffered += chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === 'ENOENT' || err.code === 'ECONNREFUSED')) resolve(undefined);
      else reject(err);
    });
    socket.on('close', () => {
      if (!connected) return;
      try {
        resolve(JSON.parse(buffered) as OperatorAnswer);
      } catch {
        reject(new Error('the running server gave no answer'));
      }
    });
  });
}

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { Agent, setGlobalDispatcher } from 'undici';
import { createAssistant } from '../../src/assistants/index.js';
import { startCluster, type Cluster } from '../../scripts/cluster/cluster.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createOwner } from '../helpers/identity.js';
import { serverCommand } from '../helpers/server-command.js';

const HAPROXY = '/usr/sbin/haproxy';

export interface TestCluster {
  database: TestDatabase;
  owner: Awaited<ReturnType<typeof createOwner>>;
  assistant: Awaited<ReturnType<typeof createAssistant>>;
  cluster: Cluster;
  /** The instances' output lines (the first 5,000), for a failing test's comment. */
  output: string[];
}

/**
 * Real instances (three unless told) behind the real HAProxy on a test database of their own: an owner, a voice
 * assistant with long limits, 1 s heartbeats and a high API limit. `env` adds or overrides the test's own knobs; the
 * cluster is killed at teardown.
 */
export async function startTestCluster(
  t: Test,
  options: {
    name: string;
    redisUrl: string;
    redisPrefix: string;
    env: Record<string, string>;
    /** Default 3. */
    instances?: number;
    /** Origins the assistant's widget may be embedded on (none by default). */
    allowedDomains?: string[];
  },
): Promise<TestCluster> {
  // The proxy closes a client's idle keep-alive connection on its own clock; a request sent on it at that moment
  // fails with "other side closed" before the proxy reads it. Clients retry such a request (browsers do), but these
  // tests count every answer, so each of their requests gets a connection of its own (pipelining 0: no keep-alive).
  setGlobalDispatcher(new Agent({ pipelining: 0 }));
  const database = await createTestDatabase(t);
  const owner = await createOwner(database.sql);
  const assistant = await createAssistant(
    database.sql,
    { accountId: owner.accountId },
    {
      name: `${options.name} voice`,
      instructions: 'Be brief.',
      settings: {
        ...(options.allowedDomains ? { allowedDomains: options.allowedDomains } : {}),
        voice: {
          enabled: true,
          recording: 'off',
          requireConsent: false,
          maxDurationSeconds: 900,
          idleTimeoutSeconds: 600,
        },
      },
    },
  );
  const workDir = mkdtempSync(join(tmpdir(), `parley-${options.name.toLowerCase()}-`));
  t.teardown(() => rmSync(workDir, { recursive: true, force: true }));
  const output: string[] = [];
  const cluster = await startCluster({
    instances: options.instances ?? 3,
    workDir,
    haproxyPath: HAPROXY,
    checkIntervalMs: 500,
    command: serverCommand('main'),
    onOutput: (name, line) => output.length < 5000 && output.push(`${name} ${line}`),
    env: {
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      DATABASE_URL: database.url,
      DATABASE_POOL_SIZE: '4',
      REDIS_URL: options.redisUrl,
      REDIS_KEY_PREFIX: options.redisPrefix,
      SECRET_KEY: 'cluster-test-secret-key-that-is-at-least-32-bytes',
      API_RATE_LIMIT_PER_MINUTE: '100000',
      VOICE_HEARTBEAT_INTERVAL_MS: '1000',
      ...options.env,
    },
  });
  t.teardown(() => cluster.stop({ signal: 'SIGKILL' }));
  return { database, owner, assistant, cluster, output };
}

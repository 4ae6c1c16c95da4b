/**
 * The peer for Parley's authenticated GET, written the usual way: Fastify + postgres.js + ioredis. Per request:
 * `Authorization: Bearer <key>` -> SHA-256 -> the key row by digest (PostgreSQL), a fixed-window rate limit in Redis
 * (INCR + PEXPIRE in one script, as @fastify/rate-limit's Redis store does), the scope check, then the same
 * `select <assistant columns> from assistants where id = $1 and account_id = $2` as Parley. GET /assistants/:id.
 * Env: BENCH_PEER_DATABASE_URL, BENCH_PEER_REDIS_URL, BENCH_PEER_REDIS_PREFIX (loopback). Prints the URL first.
 */
import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import postgres from 'postgres';

const dbUrl = process.env.BENCH_PEER_DATABASE_URL;
const redisUrl = process.env.BENCH_PEER_REDIS_URL;
if (!dbUrl || !redisUrl) throw new Error('BENCH_PEER_DATABASE_URL and BENCH_PEER_REDIS_URL are required');
const sql = postgres(dbUrl, { max: 10, transform: postgres.camel, onnotice: () => undefined });
const redis = new Redis(redisUrl, {
  keyPrefix: process.env.BENCH_PEER_REDIS_PREFIX ?? 'bench-peer:',
  enableAutoPipelining: true,
});
redis.defineCommand('rateLimitIncr', {
  numberOfKeys: 1,
  lua: "local n = redis.call('INCR', KEYS[1]) if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return {n, redis.call('PTTL', KEYS[1])}",
});
const LIMIT = 1_000_000; // raised like Parley's for the run: the cost is measured, not the refusals
const WINDOW_MS = 60_000;
const COLUMNS =
  'id, public_id, account_id, name, description, welcome_message, instructions, language, settings, created_at, updated_at';

interface KeyRow {
  id: string;
  accountId: string;
  scopes: string[];
  revoked: boolean;
}

const app = Fastify({ logger: false });
app.get<{ Params: { id: string } }>('/assistants/:id', async (request, reply) => {
  const match = /^Bearer +(\S+)$/i.exec(request.headers.authorization ?? '');
  if (!match) return reply.code(401).send({ code: 'AUTH_MISSING_KEY' });
  const digest = createHash('sha256').update(match[1]!).digest('hex');
  const [key] = await sql<
    KeyRow[]
  >`select id, account_id, scopes, revoked_at is not null as revoked from api_keys where secret_sha256 = ${digest}`;
  if (!key || key.revoked) return reply.code(401).send({ code: 'AUTH_INVALID_KEY' });
  const [count, ttl] = await (
    redis as unknown as { rateLimitIncr(k: string, w: number): Promise<[number, number]> }
  ).rateLimitIncr(`rl:${key.id}`, WINDOW_MS);
  reply.header('ratelimit', `limit=${LIMIT}, remaining=${Math.max(0, LIMIT - count)}, reset=${Math.ceil(ttl / 1000)}`);
  if (count > LIMIT) return reply.code(429).send({ code: 'RATE_LIMITED' });
  if (!key.scopes.includes('assistants:read')) return reply.code(403).send({ code: 'AUTH_MISSING_SCOPE' });
  const [row] =
    await sql`select ${sql.unsafe(COLUMNS)} from assistants where id = ${request.params.id} and account_id = ${key.accountId}`;
  if (!row) return reply.code(404).send({ code: 'ASSISTANT_NOT_FOUND' });
  return { assistant: row };
});

app.listen({ host: '127.0.0.1', port: 0 }).then((address) => process.stdout.write(`${address}/\n`));
const stop = () =>
  void Promise.allSettled([app.close(), sql.end({ timeout: 1 }), redis.quit()]).finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

/**
 * Lua scripts for every SharedStore operation that must be atomic. Each runs as one Redis command, so no
 * other client's command lands between its read and its write. Registered with ioredis defineCommand
 * (EVALSHA, falling back to EVAL after a script flush or failover). ioredis applies the key prefix to KEYS.
 */
export interface ScriptDefinition {
  numberOfKeys: number;
  lua: string;
}

/**
 * ARGV: hasExpected ('1'|'0'), expected, next, ttlMs ('' for none). Returns 1 when replaced.
 * Without a TTL the new value does not expire, exactly like a plain SET.
 */
const compareAndSet: ScriptDefinition = {
  numberOfKeys: 1,
  lua: `
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[3])
end
return 1`,
};

/** ARGV: expected. Returns 1 when deleted. */
const deleteIfEquals: ScriptDefinition = {
  numberOfKeys: 1,
  lua: `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`,
};

/** ARGV: by, ttlMs. INCRBY, with the TTL set only when this call created the key. Returns the new value. */
const incrementWithTtl: ScriptDefinition = {
  numberOfKeys: 1,
  lua: `
local existed = redis.call('EXISTS', KEYS[1])
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if existed == 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return value`,
};

/**
 * GCRA (mirror of semantics.ts gcra()). ARGV: limit, periodMs, cost. The clock is the Redis server's TIME,
 * so every instance sharing this Redis measures against one clock. Returns
 * {allowed (0|1), remaining, retryAfterMs, resetMs}. TAT is stored in ms with 3 decimals: Lua's default
 * number formatting keeps only 14 significant digits, which would round away sub-millisecond intervals.
 */
const rateLimit: ScriptDefinition = {
  numberOfKeys: 1,
  lua: `
local limit = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local interval = period / limit
local stored = tonumber(redis.call('GET', KEYS[1]))
local tat = now
if stored and stored > now then tat = stored end
local newTat = tat + cost * interval
local allowAt = newTat - period
local allowed = now >= allowAt - 0.001
local current = tat
if allowed then
  current = newTat
  if cost > 0 then
    redis.call('SET', KEYS[1], string.format('%.3f', newTat), 'PX', math.max(1, math.ceil(newTat - now)))
  end
end
local remaining = math.floor((now + period - current) / interval + 1e-9)
if remaining < 0 then remaining = 0 end
if remaining > limit then remaining = limit end
local retryAfter = 0
if not allowed then retryAfter = math.max(1, math.ceil(allowAt - now)) end
local reset = math.ceil(current - now)
if reset < 0 then reset = 0 end
return {allowed and 1 or 0, remaining, retryAfter, reset}`,
};

/** Command names as registered on the ioredis client. */
export const SCRIPTS = {
  parleyCompareAndSet: compareAndSet,
  parleyDeleteIfEquals: deleteIfEquals,
  parleyIncrementWithTtl: incrementWithTtl,
  parleyRateLimit: rateLimit,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

import t from 'tap';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { scratchDir } from '../helpers/scratch.js';

const dataDir = () => scratchDir('parley-config-');

t.test('defaults follow the documented configuration', async (t) => {
  const config = loadConfig({ DATA_DIR: dataDir() });
  t.equal(config.API_RATE_LIMIT_PER_MINUTE, 60);
  t.equal(config.HOSTED_USAGE_ENFORCEMENT, 'shadow');
  t.equal(config.HOSTED_USAGE_DEFAULT_LIMIT_MICROS, 1_000_000);
  t.equal(config.HOSTED_USAGE_MAX_OUTPUT_TOKENS, 4096);
  t.equal(config.HOSTED_USAGE_RECONCILE_STALE_MINUTES, 15);
  t.equal(config.HOSTED_USAGE_EXEMPT_PLAYGROUND, false);
  t.equal(config.VOICE_QUOTA_EXEMPT_PLAYGROUND, true);
  t.same(config.ADMIN_USER_IDS, [], 'empty means nobody is admin');
  t.equal(config.BILLING_SERVER, 'sandbox');
  t.equal(config.DATABASE_URL, undefined, 'no DATABASE_URL: embedded database');
  t.equal(config.REDIS_URL, undefined, 'no REDIS_URL: in-memory store');
  t.ok(Object.isFrozen(config), 'config is frozen');
});

t.test('values are parsed and typed', async (t) => {
  const config = loadConfig({
    DATA_DIR: dataDir(),
    PORT: '8080',
    ADMIN_USER_IDS: ' u1, u2 ,,',
    HOSTED_USAGE_ENFORCEMENT: 'enforce',
    VOICE_QUOTA_EXEMPT_PLAYGROUND: 'false',
    DATABASE_URL: 'postgres://u@db:5432/parley',
    SECRET_KEY: 'k'.repeat(40),
  });
  t.equal(config.PORT, 8080);
  t.same(config.ADMIN_USER_IDS, ['u1', 'u2']);
  t.equal(config.HOSTED_USAGE_ENFORCEMENT, 'enforce');
  t.equal(config.VOICE_QUOTA_EXEMPT_PLAYGROUND, false);
  t.equal(config.secretKey, 'k'.repeat(40));
  t.equal(config.secretKeySource, 'env');
});

t.test('every problem is reported at once, without echoing secrets', async (t) => {
  const err = t.throws(() =>
    loadConfig({
      DATA_DIR: dataDir(),
      PORT: 'eighty',
      HOSTED_USAGE_ENFORCEMENT: 'sometimes',
      API_RATE_LIMIT_PER_MINUTE: '0',
      HOSTED_USAGE_EXEMPT_PLAYGROUND: 'maybe',
      DATABASE_URL: 'mysql://x',
      SECRET_KEY: 'short-secret-value',
    }),
  ) as ConfigError;
  t.type(err, ConfigError);
  const names = err.problems.map((p) => p.split(':')[0]);
  t.same(
    names.sort(),
    [
      'API_RATE_LIMIT_PER_MINUTE',
      'DATABASE_URL',
      'HOSTED_USAGE_ENFORCEMENT',
      'HOSTED_USAGE_EXEMPT_PLAYGROUND',
      'PORT',
      'SECRET_KEY',
    ].sort(),
  );
  t.match(err.message, /PORT: must be a whole number, got "eighty"/);
  t.notMatch(err.message, /short-secret-value/, 'a secret value is never echoed');
});

t.test('SECRET_KEY unset: one is generated under DATA_DIR, kept private, and reused', async (t) => {
  const dir = dataDir();
  const first = loadConfig({ DATA_DIR: dir });
  t.equal(first.secretKeySource, 'generated');
  t.ok(Buffer.byteLength(first.secretKey) >= 32);
  const path = join(dir, 'secret.key');
  t.equal(statSync(path).mode & 0o777, 0o600, 'file is readable by its owner only');
  t.equal(readFileSync(path, 'utf8').trim(), first.secretKey);
  const second = loadConfig({ DATA_DIR: dir });
  t.equal(second.secretKey, first.secretKey, 'a restart keeps the same key');
  t.equal(second.secretKeySource, 'file');
});

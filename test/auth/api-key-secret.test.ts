import t from 'tap';
import { crc32, generateSecret, hashSecret, isWellFormedSecret } from '../../src/auth/api-key-secret.js';
import { hashPassword, verifyPassword } from '../../src/auth/password.js';
import { newSessionToken, verifySessionCookie } from '../../src/auth/session-token.js';

t.test('API key secrets: sk_live_, 256 random bits, checksum, stored only as SHA-256', async (t) => {
  t.equal(crc32('123456789'), 0xcbf43926, 'CRC-32 matches the standard check value');
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const { secret, sha256, prefix } = generateSecret();
    t.match(secret, /^sk_live_[0-9A-Za-z]{49}$/);
    t.ok(isWellFormedSecret(secret));
    t.equal(sha256, hashSecret(secret));
    t.notOk(sha256.includes(secret.slice(8)), 'the digest does not contain the secret');
    t.ok(secret.startsWith(prefix) && prefix.length < 20, 'the display prefix is a short head of the secret');
    seen.add(secret);
  }
  t.equal(seen.size, 200, 'no repeats');

  const { secret } = generateSecret();
  const body = secret.slice(8);
  // Change one character of the random part: the checksum catches it.
  const flipped = `sk_live_${body[0] === 'a' ? 'b' : 'a'}${body.slice(1)}`;
  t.notOk(isWellFormedSecret(flipped), 'a typo fails the checksum');
  t.notOk(isWellFormedSecret(secret.slice(0, -1)), 'a truncated key fails');
  t.notOk(isWellFormedSecret(secret.replace('sk_live_', 'sk_test_')), 'another prefix fails');
  t.notOk(isWellFormedSecret(`${secret}x`), 'a longer string fails');
  t.notOk(isWellFormedSecret("sk_live_' OR 1=1 --"), 'SQL-looking input fails');
});

t.test('passwords are scrypt hashes, verified in constant time', async (t) => {
  const stored = await hashPassword('hunter2-hunter2');
  t.match(stored, /^scrypt\$16384\$8\$1\$/);
  t.notOk(stored.includes('hunter2'));
  t.ok(await verifyPassword('hunter2-hunter2', stored));
  t.notOk(await verifyPassword('hunter2-hunter3', stored));
  t.notOk(await verifyPassword('hunter2-hunter2', 'plain'), 'a malformed stored hash never verifies');
  t.not(await hashPassword('same'), await hashPassword('same'), 'salted');
});

t.test('session cookies are MACed with SECRET_KEY; only the token hash is kept', async (t) => {
  const key = 'k'.repeat(32);
  const { cookieValue, sha256 } = newSessionToken(key);
  t.equal(verifySessionCookie(cookieValue, key), sha256);
  t.equal(verifySessionCookie(cookieValue, 'other'.repeat(8)), null, 'another deployment secret refuses it');
  t.equal(
    verifySessionCookie(`${cookieValue.slice(0, 10)}x${cookieValue.slice(11)}`, key),
    null,
    'a changed token refuses',
  );
  t.equal(verifySessionCookie('garbage', key), null);
});

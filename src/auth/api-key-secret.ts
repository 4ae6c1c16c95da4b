import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The API key secret format (docs/design-decisions.md, Identity):
 * `sk_live_` + 32 random bytes in base62 (43 chars, zero-padded) + CRC32 of everything before it in base62
 * (6 chars). The checksum lets a typo or a truncated paste be refused before any database lookup, and lets
 * secret scanners recognise a real key. 256 bits of randomness; only the SHA-256 is stored.
 */
export const SECRET_PREFIX = 'sk_live_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 32;
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
/** Characters of the secret kept for display: the prefix plus 6 of the random body (~36 of 256 bits). */
const DISPLAY_LENGTH = SECRET_PREFIX.length + 6;
const SHAPE = new RegExp(`^${SECRET_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);

function toBase62(value: bigint, width: number): string {
  let out = '';
  let n = value;
  while (n > 0n) {
    out = BASE62[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out.padStart(width, '0');
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3), as zlib computes it. */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function checksumOf(head: string): string {
  return toBase62(BigInt(crc32(head)), CHECKSUM_LENGTH);
}

export interface NewSecret {
  secret: string;
  /** Hex SHA-256: the only form that is stored. */
  sha256: string;
  /** The display prefix (not enough to use the key). */
  prefix: string;
}

export function generateSecret(): NewSecret {
  const body = toBase62(BigInt(`0x${randomBytes(RANDOM_BYTES).toString('hex')}`), BODY_LENGTH);
  const head = `${SECRET_PREFIX}${body}`;
  const secret = `${head}${checksumOf(head)}`;
  return { secret, sha256: hashSecret(secret), prefix: secret.slice(0, DISPLAY_LENGTH) };
}

/** True when the string has the shape of a key and its checksum matches (says nothing about existence). */
export function isWellFormedSecret(candidate: string): boolean {
  if (!SHAPE.test(candidate)) return false;
  const head = candidate.slice(0, candidate.length - CHECKSUM_LENGTH);
  return candidate.slice(-CHECKSUM_LENGTH) === checksumOf(head);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time equality of two hex digests of equal length (false otherwise). */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

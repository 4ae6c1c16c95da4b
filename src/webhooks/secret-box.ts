import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encryption at rest for secrets Parley must use again later (webhook signing secrets): AES-256-GCM under a key
 * derived (HKDF-SHA256) from the deployment's SECRET_KEY and a purpose, so the key is never the raw SECRET_KEY and
 * other uses of it stay independent. The row's id is bound as associated data: a sealed value copied onto another
 * row does not open. Changing SECRET_KEY makes existing sealed values unreadable (their endpoints need a new secret).
 */
export interface SecretBox {
  seal(plain: string, boundTo: string): string;
  /** Throws when the value was not sealed by this key for this row. */
  open(sealed: string, boundTo: string): string;
}

const VERSION = 'v1';

export function createSecretBox(deploymentSecret: string, purpose: string): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', deploymentSecret, 'parley secret box', purpose, 32));
  return {
    seal(plain, boundTo) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(boundTo));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed, boundTo) {
      const [version, payload] = sealed.split('.');
      if (version !== VERSION || payload === undefined) throw new Error('unknown sealed secret format');
      const raw = Buffer.from(payload, 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

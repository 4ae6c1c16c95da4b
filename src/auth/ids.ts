import { customAlphabet } from 'nanoid';

/** Alphanumeric only: ids stay one "word" when double-clicked, in URLs and in logs. 20 chars ≈ 119 bits. */
const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);

export type IdPrefix = 'usr' | 'acct' | 'key' | 'ses' | 'aud';

/** A new prefixed id: usr_..., acct_..., key_..., ses_..., aud_... */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${idBody()}`;
}

/** Shape of an id with the given prefix (path parameters are checked against it before any lookup). */
export function idPattern(prefix: IdPrefix): RegExp {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`);
}

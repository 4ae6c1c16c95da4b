import { customAlphabet } from 'nanoid';

const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);

/** ures_... (reservation), uev_... (usage event). */
export function newMeteringId(prefix: 'ures' | 'uev'): string {
  return `${prefix}_${idBody()}`;
}

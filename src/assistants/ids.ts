import { randomUUID } from 'node:crypto';
import { customAlphabet } from 'nanoid';

/** Alphanumeric only, like the identity ids: one "word" in URLs and logs. 20 chars ≈ 119 bits. */
const idBody = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 20);

export type KnowledgeIdPrefix = 'asst' | 'doc' | 'conv' | 'msg';

/** A new prefixed id: asst_ (an assistant's public id), doc_, conv_, msg_. */
export function newKnowledgeId(prefix: KnowledgeIdPrefix): string {
  return `${prefix}_${idBody()}`;
}

/** An assistant's internal id: a UUID, so it can never be mistaken for the public asst_ id. */
export function newInternalAssistantId(): string {
  return randomUUID();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PUBLIC = /^asst_[0-9A-Za-z]{1,64}$/;

export function isPublicAssistantId(value: string): boolean {
  return PUBLIC.test(value);
}

export function isInternalAssistantId(value: string): boolean {
  return UUID.test(value);
}

/** Shape of a prefixed id, checked before any lookup (a malformed id is simply not found). */
export function hasIdShape(prefix: KnowledgeIdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{1,64}$`).test(value);
}

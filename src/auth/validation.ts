import { z } from 'zod';
import { SCOPES, type Scope } from './principal.js';

/** Field rules shared by the routes and the operator CLI: one definition of a valid email, password, name. */
export const emailSchema = z
  .string()
  .trim()
  .min(3)
  .max(254)
  .pipe(z.email({ error: 'must be an email address' }));

/** New passwords. Long enough to matter; bounded so hashing cost stays bounded. */
export const newPasswordSchema = z.string().min(8, { error: 'must be at least 8 characters' }).max(256);

/** Passwords offered at sign-in: no policy hints, just bounds. */
export const loginPasswordSchema = z.string().min(1).max(1024);

export const displayNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), { error: 'must not contain control characters' });

/** A non-empty list of known scopes; duplicates are folded and the documented order kept. */
export const scopesSchema = z
  .array(z.enum(SCOPES, { error: `must be one of: ${SCOPES.join(', ')}` }))
  .min(1, { error: 'choose at least one scope' })
  .max(SCOPES.length * 2)
  .transform((list) => normalizeScopes(list));

export function normalizeScopes(list: readonly Scope[]): Scope[] {
  const wanted = new Set(list);
  return SCOPES.filter((s) => wanted.has(s));
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

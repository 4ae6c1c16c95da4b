import type { Sql } from '../db/index.js';

/**
 * The widget's one table: the generation of each assistant's widget secret (the secret is derived, never stored).
 * Feedback is stored by conversations (message_feedback); rate-limit buckets live in the shared store.
 */

/** The current widget secret generation of an assistant, or undefined when none was ever issued. */
export async function findSecretGeneration(sql: Sql, assistantId: string): Promise<number | undefined> {
  const [row] = await sql<{ generation: number }[]>`
    select generation from widget_secrets where assistant_id = ${assistantId}`;
  return row?.generation;
}

/** Issues the next generation (1 for the first) and returns it with when it was rotated. */
export async function rotateSecretGeneration(
  sql: Sql,
  assistantId: string,
): Promise<{ generation: number; rotatedAt: Date }> {
  const [row] = await sql<{ generation: number; rotatedAt: Date }[]>`
    insert into widget_secrets (assistant_id, generation) values (${assistantId}, 1)
    on conflict (assistant_id) do update set generation = widget_secrets.generation + 1, rotated_at = now()
    returning generation, rotated_at`;
  return row!;
}

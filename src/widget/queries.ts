/**
 * The widget has no tables of its own: feedback is stored by conversations (message_feedback), buckets live in the
 * shared store. Kept for the capability layout.
 */
export {};

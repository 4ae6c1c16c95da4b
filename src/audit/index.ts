/**
 * The audit log: one row per operator or account change, written in the change's own transaction. A foundation
 * concern (beside db), so every capability that changes something (auth, admin, metering) can record it without
 * importing another capability.
 */
export { writeAuditLog, readAuditLog, type AuditEntry, type AuditRow } from './audit-log.js';
export type { Queryable } from './queries.js';

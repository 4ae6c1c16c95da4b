/**
 * The operator capability. The gate is the `admin` authenticator (src/auth: a dashboard session of a user listed in
 * ADMIN_USER_IDS or granted in the database); every admin change writes one audit row with writeAuditLog (src/audit).
 */
export { adminRoutes } from './routes.js';
export { operatorSocket } from './operator-socket.js';
export { CREATE_OWNER_COMMAND, firstOwnerCommand, startupHint, startupLine, type StartupHint } from './first-run.js';

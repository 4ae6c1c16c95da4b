/** The owner dashboard (web/dashboard, built by `npm run build:dashboard`), served under /dashboard. */
export { dashboardRoutes, DASHBOARD_CSP, DEFAULT_DASHBOARD_DIR, type DashboardOptions } from './routes.js';
export { DashboardErrorCodes } from './errors.js';

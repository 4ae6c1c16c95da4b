/** The owner dashboard (web/dashboard, built by `npm run build:dashboard`), served under /dashboard. */
export { dashboardRoutes } from './routes.js';

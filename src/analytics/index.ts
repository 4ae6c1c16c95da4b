/** Analytics: per-assistant totals, outcomes, feedback, daily series and top unanswered questions. */
export { analyticsRoutes } from './routes.js';

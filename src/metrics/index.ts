/**
 * Prometheus metrics: off unless METRICS_TOKEN (GET /metrics with a bearer token) or METRICS_PORT (a port
 * of its own) is set. One registry per app; the voice side, the shell and metering report into it (see README).
 */
export { Metrics } from './metrics.js';
export { metricsRoutes, metricsListener } from './routes.js';
export { observeMeter, observeVoiceQuota } from './observe.js';

/** Widget: the keyless security policy (Origin, rate limits, signature) and the widget routes. */
export { widgetRoutes } from './routes.js';
export { createWidgetPolicy, isOriginAllowed, type WidgetPolicy, type PolicyRequest } from './policy.js';

/** Widget: the keyless security policy (Origin, rate limits, signature) and the widget routes. */
export { widgetRoutes } from './routes.js';
export {
  createWidgetPolicy,
  isOriginAllowed,
  isSignatureValid,
  type WidgetPolicy,
  type PolicyAssistant,
  type PolicyRequest,
  type AdmitOptions,
} from './policy.js';
export { WidgetErrorCodes, widgetErrors } from './errors.js';

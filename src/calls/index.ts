/**
 * Calls Parley places: one call out by API through a registered number's carrier, its status from the carrier's
 * signed callbacks, answering-machine detection with a voicemail rule, and cancel. An answered call is connected to
 * the assistant by the telephony capability, exactly as an inbound call is.
 */
import type { Sql } from '../db/index.js';
import type { AnyRoute } from '../http/index.js';
import type { Logger } from '../log/index.js';
import type { Meter } from '../metering/index.js';
import type { OutboundCarrier } from '../telephony/index.js';
import { carrierCallRoutes } from './carrier-routes.js';
import { callRoutes } from './routes.js';

export function callsCapability(deps: { sql: Sql; log: Logger; meter: Meter; carrier: OutboundCarrier }): {
  routes: AnyRoute[];
} {
  const calls = { ...deps, log: deps.log.child({ capability: 'calls' }) };
  return { routes: [...callRoutes(calls), ...carrierCallRoutes(calls)] };
}

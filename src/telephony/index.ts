/**
 * Telephony: phone numbers an owner routes to an assistant, and the carrier's call webhook that turns a ringing
 * number into a voice call on the phone transport (src/voice/transports/twilio/). This file is what the app uses.
 */
import type { Admission } from '../admission/index.js';
import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import type { AnyRoute } from '../http/index.js';
import type { Logger } from '../log/index.js';
import type { TwilioTransport, VoiceService } from '../voice/index.js';
import { createSecretBox } from '../webhooks/index.js';
import { outboundCarrier, type OutboundCarrier } from './outbound.js';
import { phoneNumberRoutes } from './routes.js';

export { VOICE_WEBHOOK_PATH } from './service.js';
export type { OutboundCarrier, CallingNumber } from './outbound.js';
export type { ConnectedCall } from './service.js';
export { dialNumber, escapeXml, hangUpCall, sayThenHangUp } from './twiml.js';
export { telephonyErrors } from './errors.js';

export function telephonyCapability(deps: {
  sql: Sql;
  config: Readonly<Config>;
  log: Logger;
  voice: VoiceService;
  phone: TwilioTransport;
  /** The voice mints' admission pool: a call takes a slot of it like any mint. */
  admission?: Admission;
}): { routes: AnyRoute[]; outbound: OutboundCarrier } {
  const tokens = createSecretBox(deps.config.secretKey, 'carrier auth tokens');
  const log = deps.log.child({ capability: 'telephony' });
  if (deps.config.PUBLIC_URL === undefined)
    log.warn(
      { trustProxy: deps.config.TRUST_PROXY },
      'PUBLIC_URL is not set: carrier webhooks are signed over the URL the carrier calls, so phone numbers can be added only from a loopback host or through a trusted proxy that sends X-Forwarded-Proto',
    );
  return {
    routes: phoneNumberRoutes({ ...deps, log, tokens }),
    outbound: outboundCarrier({ ...deps, log, tokens }),
  };
}

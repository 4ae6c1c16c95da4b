/**
 * Calls Parley places: one call out by API, or batches of contacts paced by a durable queue, through a registered
 * number's carrier; their status from the carrier's signed callbacks, answering-machine detection with a voicemail
 * rule, and cancel. An answered call is connected to the assistant by the telephony capability, as an inbound one.
 */
import type { Sql } from '../db/index.js';
import type { AnyRoute } from '../http/index.js';
import type { Logger } from '../log/index.js';
import type { Meter } from '../metering/index.js';
import type { OutboundCarrier } from '../telephony/index.js';
import type { PollLoop } from '../jobs/poll-loop.js';
import { batchRoutes } from './batch-routes.js';
import { batchWorker } from './batch-worker.js';
import { carrierCallRoutes } from './carrier-routes.js';
import { callRoutes } from './routes.js';
import { transferSessionCall } from './service.js';

export function callsCapability(deps: {
  sql: Sql;
  log: Logger;
  meter: Meter;
  carrier: OutboundCarrier;
  /** How often the batch worker looks for contacts to call (CALL_BATCH_POLL_MS). */
  batchPollMs: number;
}): {
  routes: AnyRoute[];
  worker: PollLoop;
  /** The built-in transfer_call on a call Parley placed (false: the voice session is no outbound call's). */
  transferSessionCall(voiceSessionId: string, to: string): Promise<boolean>;
} {
  const calls = { ...deps, log: deps.log.child({ capability: 'calls' }) };
  return {
    routes: [...callRoutes(calls), ...batchRoutes(calls), ...carrierCallRoutes(calls)],
    worker: batchWorker(calls, { pollMs: deps.batchPollMs }),
    transferSessionCall: (voiceSessionId, to) => transferSessionCall(calls, voiceSessionId, to),
  };
}

import { isUsageRefusal, precheckVoiceCall } from '../metering/index.js';
import { createPollLoop, type PollLoop } from '../jobs/poll-loop.js';
import * as bq from './batch-queries.js';
import { announceBatchEnd } from './batch-service.js';
import * as q from './queries.js';
import { announce, changeStatus, dial, newCallId, type CallsDeps } from './service.js';

/** A stored batch call with no carrier id after this long was never placed (its instance stopped before asking). */
const UNPLACED_AFTER_SECONDS = 60;

/**
 * The batch worker: every `pollMs`, each running batch (one instance at a time: its row is locked, others skip it)
 * claims the contacts due, as many as its maxConcurrent leaves room for, inside its calling window and the plan's
 * concurrent calls less the inbound reserve. A contact's claim (its attempt counted) and its call's row are one
 * transaction, committed before the carrier is asked: a restart can lose a try, never make two.
 */
export function batchWorker(deps: CallsDeps, options: { pollMs: number; now?: () => Date }): PollLoop {
  const now = options.now ?? (() => new Date());
  const loop = createPollLoop({
    name: 'call batches',
    pollMs: options.pollMs,
    log: deps.log,
    runOnce: async () => {
      for (const id of await q.unplacedBatchCalls(deps.sql, UNPLACED_AFTER_SECONDS))
        await changeStatus(deps, id, 'failed', {
          outcome: 'failed',
          failure: 'The call was not placed (the instance placing it stopped).',
          ended: true,
        });
      let dialed = false;
      for (const id of await bq.runningBatchIds(deps.sql, 20)) {
        if (loop.signal.aborted) break;
        const calls = await claim(id);
        for (const call of calls) {
          dialed = true;
          await dial(deps, call).catch(() => undefined); // a refusal leaves the call failed; its contact settles
        }
      }
      return dialed;
    },
  });

  /** Claims this batch's due contacts and stores their calls (one transaction); the calls to place. */
  async function claim(batchId: string): Promise<q.CallRow[]> {
    return deps.sql.begin(async (tx) => {
      const batch = await bq.lockRunningBatch(tx, batchId);
      if (batch === undefined) return [];
      await bq.touchBatch(tx, batchId);
      const open = await bq.openContacts(tx, batchId);
      if (open.pending + open.calling === 0) {
        const done = await bq.completeIfDone(tx, batchId);
        if (done !== undefined) await announceBatchEnd(tx, done);
        return [];
      }
      if (batch.callWindow !== null && !inWindow(batch.callWindow, now())) return [];
      let room = batch.maxConcurrent - open.calling;
      if (room <= 0) return [];
      if (deps.meter.mode === 'enforce') {
        // One call per pass under the plan: each must leave the inbound reserve free beside every open call.
        try {
          const ringing = await q.countRingingCalls(tx, batch.accountId);
          await precheckVoiceCall(deps.meter, batch.accountId, ringing + batch.reservedInbound);
        } catch (err) {
          if (isUsageRefusal(err)) return [];
          throw err;
        }
        room = 1;
      }
      const contacts = await bq.claimContacts(tx, batchId, room);
      const calls: q.CallRow[] = [];
      for (const contact of contacts) {
        const call = await q.insertCall(tx, {
          id: newCallId(),
          accountId: batch.accountId,
          assistantId: batch.assistantId,
          phoneNumberId: batch.phoneNumberId,
          toNumber: contact.toNumber,
          fromNumber: batch.fromNumber,
          voicemail: batch.voicemail,
          variables: contact.variables,
          metadata: {},
          maxDurationSeconds: null,
          publicBase: batch.publicBase,
          batchId,
          batchSeq: contact.seq,
        });
        await bq.setContactCall(tx, batchId, contact.seq, call.id);
        await announce(tx, call);
        calls.push(call);
      }
      return calls;
    });
  }

  return loop;
}

/** Whether `at` falls on one of the window's days, between its start and end, in its time zone. */
export function inWindow(window: bq.CallWindow, at: Date): boolean {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: window.timezone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(part('weekday'));
  const minute = Number(part('hour')) * 60 + Number(part('minute'));
  const [sh, sm] = window.start.split(':').map(Number);
  const [eh, em] = window.end.split(':').map(Number);
  return window.days.includes(day) && minute >= sh! * 60 + sm! && minute < eh! * 60 + em!;
}

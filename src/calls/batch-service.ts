import { randomBytes } from 'node:crypto';
import { getOwnedAssistant } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Sql, TransactionSql } from '../db/index.js';
import { enqueueEvent } from '../webhooks/index.js';
import * as bq from './batch-queries.js';
import { presentBatch, type PresentedBatch } from './batch-schemas.js';
import { callsErrors } from './errors.js';
import type { CallsDeps } from './service.js';

export interface NewBatch {
  assistantId: string;
  from: string;
  contacts: { to: string; variables?: Record<string, string> | undefined }[];
  maxConcurrent: number;
  reservedInbound: number;
  retry?: bq.RetryRule | undefined;
  window?: bq.CallWindow | undefined;
  voicemail?: 'hangup' | { message: string } | undefined;
}

const NO_RETRY: bq.RetryRule = { onNoAnswer: false, onBusy: false, attempts: 1, afterMinutes: 60 };

async function present(sql: Sql | TransactionSql, row: bq.BatchRow): Promise<PresentedBatch> {
  return presentBatch(row, await bq.progressOf(sql, row.id));
}

/** `call-batch.completed`: every contact is done (or the batch was canceled), with the outcomes. */
export async function announceBatchEnd(tx: Sql | TransactionSql, row: bq.BatchRow): Promise<void> {
  await enqueueEvent(tx, row.accountId, 'call-batch.completed', await present(tx, row));
}

/** Stores the batch and its contacts, `running`: the batch worker of any instance starts calling them. */
export async function createBatch(
  deps: CallsDeps,
  owner: OwnerPrincipal,
  input: NewBatch,
  headers: Readonly<Record<string, string>>,
): Promise<PresentedBatch> {
  const assistant = await getOwnedAssistant(deps.sql, owner, input.assistantId);
  const number = await deps.carrier.numberOf(owner.accountId, input.from);
  if (number === undefined) throw callsErrors.fromNotRegistered();
  if (!assistant.settings.voice.enabled) throw callsErrors.voiceDisabled();
  const voicemail =
    input.voicemail === undefined
      ? null
      : input.voicemail === 'hangup'
        ? ({ action: 'hangup' } as const)
        : ({ action: 'message', message: input.voicemail.message } as const);
  return deps.sql.begin(async (tx) => {
    const row = await bq.insertBatch(
      tx,
      {
        id: `cb_${randomBytes(12).toString('hex')}`,
        accountId: owner.accountId,
        assistantId: assistant.id,
        phoneNumberId: number.id,
        fromNumber: number.phoneNumber,
        maxConcurrent: input.maxConcurrent,
        reservedInbound: input.reservedInbound,
        retry: input.retry ?? NO_RETRY,
        callWindow: input.window ?? null,
        voicemail,
        publicBase: deps.carrier.publicBase(headers),
        total: input.contacts.length,
      },
      input.contacts,
    );
    return present(tx, row);
  });
}

export async function getBatch(deps: Pick<CallsDeps, 'sql'>, owner: OwnerPrincipal, id: string) {
  const row = await bq.findBatch(deps.sql, owner.accountId, id);
  if (row === undefined) throw callsErrors.batchNotFound();
  return present(deps.sql, row);
}

export async function listBatches(deps: Pick<CallsDeps, 'sql'>, owner: OwnerPrincipal) {
  const rows = await bq.listBatches(deps.sql, owner.accountId);
  return Promise.all(rows.map((row) => present(deps.sql, row)));
}

/**
 * pause: no new call starts (calls on the line go on); resume: calling goes on; cancel: contacts not yet called are
 * done `canceled` and the batch ends (calls on the line go on). A move the batch cannot make is 409.
 */
export async function moveBatch(
  deps: Pick<CallsDeps, 'sql'>,
  owner: OwnerPrincipal,
  id: string,
  action: 'pause' | 'resume' | 'cancel',
): Promise<PresentedBatch> {
  const existing = await bq.findBatch(deps.sql, owner.accountId, id);
  if (existing === undefined) throw callsErrors.batchNotFound();
  return deps.sql.begin(async (tx) => {
    const moved =
      action === 'pause'
        ? await bq.setBatchStatus(tx, owner.accountId, id, ['running'], 'paused')
        : action === 'resume'
          ? await bq.setBatchStatus(tx, owner.accountId, id, ['paused'], 'running')
          : await bq.setBatchStatus(tx, owner.accountId, id, ['running', 'paused'], 'canceled');
    if (moved === undefined) throw callsErrors.batchCannot(action, existing.status);
    if (action === 'cancel') {
      await bq.cancelPending(tx, id);
      await announceBatchEnd(tx, moved);
    }
    return present(tx, moved);
  });
}

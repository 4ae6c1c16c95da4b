import { randomBytes } from 'node:crypto';
import { decodeCursor, encodeCursor } from '../assistants/index.js';
import type { OwnerPrincipal } from '../auth/index.js';
import type { Sql } from '../db/index.js';
import {
  GuardedFetchError,
  parseFetchableUrl,
  resolveAllowed,
  type AddressPolicy,
  type LookupAll,
} from '../documents/index.js';
import { lookup as dnsLookup } from 'node:dns/promises';
import { messageBody, newMessageId, TEST_EVENT_TYPE, type SubscribableEventType } from './events.js';
import { webhookErrors } from './errors.js';
import * as q from './queries.js';
import type { SecretBox } from './secret-box.js';
import { newEndpointSecret } from './signature.js';

type Owner = Pick<OwnerPrincipal, 'accountId'>;

export interface WebhookServiceDeps {
  sql: Sql;
  secrets: SecretBox;
  /** The URL sources' address policy, or null when WEBHOOK_ALLOW_PRIVATE_NETWORKS lets any address through. */
  policy: AddressPolicy | null;
  lookup?: LookupAll;
  /** Wakes this instance's delivery worker (a test message or a replay was just queued). */
  onQueued: () => void;
}

/** Endpoints per account: each event is sent once per subscribed endpoint, so this bounds the fan-out. */
export const MAX_ENDPOINTS = 20;

/** After a rotation the previous secret keeps signing beside the new one this long. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export function presentEndpoint(row: q.EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events as SubscribableEventType[],
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function presentDelivery(row: q.DeliveryRow) {
  return {
    id: row.id,
    messageId: row.messageId,
    eventType: row.eventType,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
  };
}

function newEndpointId(): string {
  return `whep_${randomBytes(15).toString('base64url').replace(/[-_]/g, '')}`;
}

const BLOCKED =
  'The URL points to a private, local or reserved network address, which is not allowed. For a receiver on this ' +
  'machine or network (local development), the operator sets WEBHOOK_ALLOW_PRIVATE_NETWORKS=true and restarts.';

/**
 * Refuses a target URL up front: not http(s), credentials in it, or (unless private networks are allowed) a literal
 * or resolved address the policy refuses. A name that does not resolve yet is accepted: every delivery resolves and
 * checks it again, and pins the connection to the address it checked.
 */
async function checkUrl(deps: WebhookServiceDeps, raw: string): Promise<string> {
  let url: URL;
  try {
    url = parseFetchableUrl(raw);
  } catch (err) {
    throw webhookErrors.urlNotAllowed(err instanceof GuardedFetchError ? err.message : 'The URL is not valid.');
  }
  if (deps.policy === null) return url.toString();
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) throw webhookErrors.urlNotAllowed(BLOCKED);
  try {
    await resolveAllowed(url, deps.policy, deps.lookup ?? ((h) => dnsLookup(h, { all: true, verbatim: true })));
  } catch (err) {
    if (err instanceof GuardedFetchError && err.failure === 'blocked_address')
      throw webhookErrors.urlNotAllowed(BLOCKED);
  }
  return url.toString();
}

async function ownedEndpoint(sql: Sql, owner: Owner, id: string): Promise<q.EndpointRow> {
  const row = await q.findEndpoint(sql, owner.accountId, id);
  if (!row) throw webhookErrors.endpointNotFound();
  return row;
}

export async function createEndpoint(
  deps: WebhookServiceDeps,
  owner: Owner,
  input: { url: string; events: SubscribableEventType[]; description?: string | undefined },
) {
  const url = await checkUrl(deps, input.url);
  if ((await q.countEndpoints(deps.sql, owner.accountId)) >= MAX_ENDPOINTS)
    throw webhookErrors.endpointLimit(MAX_ENDPOINTS);
  const id = newEndpointId();
  const secret = newEndpointSecret();
  const row = await q.insertEndpoint(deps.sql, {
    id,
    accountId: owner.accountId,
    url,
    events: [...new Set(input.events)],
    description: input.description ?? null,
    sealed: deps.secrets.seal(secret, id),
  });
  return { ...presentEndpoint(row), secret };
}

export async function listEndpoints(deps: WebhookServiceDeps, owner: Owner) {
  return (await q.listEndpoints(deps.sql, owner.accountId)).map(presentEndpoint);
}

export async function getEndpoint(deps: WebhookServiceDeps, owner: Owner, id: string) {
  return presentEndpoint(await ownedEndpoint(deps.sql, owner, id));
}

export async function updateEndpoint(
  deps: WebhookServiceDeps,
  owner: Owner,
  id: string,
  patch: {
    url?: string | undefined;
    events?: SubscribableEventType[] | undefined;
    description?: string | null | undefined;
    enabled?: boolean | undefined;
  },
) {
  const url = patch.url === undefined ? undefined : await checkUrl(deps, patch.url);
  const row = await q.updateEndpoint(deps.sql, owner.accountId, id, {
    ...(url !== undefined ? { url } : {}),
    ...(patch.events !== undefined ? { events: [...new Set(patch.events)] } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
    ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
  });
  if (!row) throw webhookErrors.endpointNotFound();
  return presentEndpoint(row);
}

export async function deleteEndpoint(deps: WebhookServiceDeps, owner: Owner, id: string): Promise<void> {
  if (!(await q.deleteEndpoint(deps.sql, owner.accountId, id))) throw webhookErrors.endpointNotFound();
}

/** A new secret, shown once; the old one keeps signing beside it for 24 h (two signatures in the header). */
export async function rotateSecret(deps: WebhookServiceDeps, owner: Owner, id: string) {
  const row = await ownedEndpoint(deps.sql, owner, id);
  const secret = newEndpointSecret();
  const rotated = await q.rotateSecret(
    deps.sql,
    owner.accountId,
    id,
    deps.secrets.seal(secret, id),
    row.secretSealed,
    new Date(Date.now() + ROTATION_OVERLAP_MS),
  );
  if (!rotated) throw webhookErrors.endpointNotFound();
  return { ...presentEndpoint(rotated), secret };
}

/** Queues a `webhook.test` message to this endpoint alone (whatever it subscribes to). */
export async function sendTest(deps: WebhookServiceDeps, owner: Owner, id: string) {
  const row = await ownedEndpoint(deps.sql, owner, id);
  if (!row.enabled) throw webhookErrors.endpointDisabled();
  const messageId = newMessageId();
  const body = messageBody(TEST_EVENT_TYPE, { endpointId: row.id, message: 'A test event sent from Parley.' });
  const deliveryId = await q.enqueueForEndpoint(
    deps.sql,
    { id: messageId, accountId: owner.accountId, eventType: TEST_EVENT_TYPE, body },
    row.id,
  );
  deps.onQueued();
  return presentDelivery((await q.findDelivery(deps.sql, row.id, deliveryId))!);
}

export async function listDeliveries(
  deps: WebhookServiceDeps,
  owner: Owner,
  id: string,
  page: { limit: number; cursor?: string | undefined },
) {
  const endpoint = await ownedEndpoint(deps.sql, owner, id);
  const rows = await q.listDeliveries(deps.sql, endpoint.id, { limit: page.limit, after: decodeCursor(page.cursor) });
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return {
    deliveries: items.map(presentDelivery),
    nextCursor: rows.length > page.limit && last ? encodeCursor(last) : null,
  };
}

/** Sends a delivery's message again (same webhook-id, same body) as a new delivery. */
export async function replay(deps: WebhookServiceDeps, owner: Owner, id: string, deliveryId: string) {
  const endpoint = await ownedEndpoint(deps.sql, owner, id);
  if (!endpoint.enabled) throw webhookErrors.endpointDisabled();
  const created = await q.replayDelivery(deps.sql, endpoint.id, deliveryId);
  if (created === undefined) throw webhookErrors.deliveryNotFound();
  deps.onQueued();
  return presentDelivery((await q.findDelivery(deps.sql, endpoint.id, created))!);
}

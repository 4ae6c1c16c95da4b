import type { Config } from '../../config/index.js';
import type { Sql, TransactionSql } from '../../db/index.js';
import type { Logger } from '../../log/index.js';
import type { VoiceClock, VoiceProvider } from '../../providers/voice/index.js';
import type { SharedStore } from '../../store/types.js';
import type { ToolRuntime } from '../../tools/index.js';
import type { WidgetPolicy } from '../../widget/index.js';
import type { VoiceAudience } from '../end-reasons.js';
import type { SessionLimits } from './limits.js';
import type { LiveSessionEnvironment, LiveVoiceSession } from './live-session.js';
import type { VoiceObserver } from './observer.js';
import type { OwnershipTiming, VoiceOwnership } from './ownership.js';
import type { VoiceQuota } from './quota.js';
import type { Supervisor } from './supervisor.js';
import type { CallerTransport, DirectMediaTransport } from './transport.js';
import type { TimelineWriter } from '../timeline/writer.js';
import type { VoiceSource } from '../types.js';

export interface VoiceServiceDeps {
  config: Readonly<Config>;
  log: Logger;
  sql: Sql;
  store: SharedStore;
  /** Absent when no provider is configured: mints answer 503. */
  voiceProvider?: VoiceProvider | undefined;
}

/** Knobs for tests and benches; production uses the defaults. */
export interface VoiceOptions {
  /** Supervision clock (heartbeat loss, idle, max duration, keepalives). Tests pass a ManualClock. */
  clock?: VoiceClock;
  /** Ownership renewal and expiry (wall time: other instances read the records). Default 5 s / 15 s. */
  ownership?: Partial<OwnershipTiming>;
  /** How often an instance looks for sessions whose owner died (wall time). Default 30 s. */
  orphanSweepEveryMs?: number;
  quota?: VoiceQuota;
  /** The widget's keyless policy (Origin, rate limits, signature); the app passes the one chat uses. */
  keylessPolicy?: WidgetPolicy;
  limits?: Partial<Pick<SessionLimits, 'mediaGraceMs' | 'quotaCheckEveryMs' | 'joinTimeoutMs'>>;
  /** Metrics: mints, ends, heartbeats, gate decisions (src/metrics). */
  observer?: VoiceObserver;
  /** Runs inside the transaction that stores a new call (webhooks queue voice.session.started with it). */
  onSessionStored?: (tx: TransactionSql, sessionId: string, transport: string) => Promise<void>;
  /** The owner's tools (calls of an assistant with tools offer them to the provider's backend model). */
  tools?: ToolRuntime;
  /**
   * The built-in transfer_call on a phone call: a cold transfer by the carrier (the calls capability; false when the
   * session is no call it placed). Absent: the tool answers that it is not available.
   */
  transferPhoneCall?: (sessionId: string, to: string) => Promise<boolean>;
}

export { HEARTBEAT_LOSS_MS } from './limits.js';
/** A final answer stays readable this long after the end (5 minutes: long enough for a client to ask after a dropped connection). */
export const TOMBSTONE_TTL_MS = 5 * 60_000;

/**
 * What the parts of one instance's control plane share (mint admission, session control, settlement, fleet):
 * the registry of the sessions this instance owns and the collaborators that act on them. VoiceService builds it.
 */
export interface VoiceContext {
  readonly deps: VoiceServiceDeps;
  readonly sessions: Map<string, LiveVoiceSession>;
  readonly supervisor: Supervisor;
  readonly ownership: VoiceOwnership;
  readonly quota: VoiceQuota;
  readonly keyless: WidgetPolicy;
  readonly clock: VoiceClock;
  readonly limits: Pick<SessionLimits, 'mediaGraceMs' | 'quotaCheckEveryMs' | 'joinTimeoutMs'>;
  /** What a live session asks of the service (end, grounding, transcript writes, quota). */
  readonly environment: LiveSessionEnvironment;
  /** SIGTERM: no new mints. */
  draining: boolean;
  /** How callers connect (the mint's `stream`) unless the mint names another; attached before any mint. */
  transport: CallerTransport | undefined;
  /** Every attached transport by name (a phone call's mint names `twilio`). */
  readonly transports: Map<string, CallerTransport>;
  /** The calls' transcript state (forgotten here when a call goes on elsewhere). */
  readonly turns: { forget(sessionId: string): void; readonly size: number };
  /** Writes the calls' timelines (every few seconds, and once settled). */
  readonly timelines: TimelineWriter;
  /** How WebRTC callers reach the provider directly (mints with `transport.type` webrtc); absent: refused. */
  direct: DirectMediaTransport | undefined;
  /** Metrics (optional): settlements report here too, so a dead owner's calls are counted where they are settled. */
  readonly observer?: VoiceObserver | undefined;
  readonly onSessionStored?: VoiceOptions['onSessionStored'];
  readonly tools?: ToolRuntime | undefined;
  readonly transferPhoneCall?: VoiceOptions['transferPhoneCall'];
  /**
   * Settlements of ended sessions that the database did not take yet (retried by the fleet's liveness loop). Their
   * sessions stay in `sessions` (status `ended`) and keep their ownership record until it lands. A dead owner's call
   * settled `lost` here whose usage the meter could not settle waits here too (by its id; no session in `sessions`).
   */
  readonly settling: Map<string, () => Promise<void>>;
  /** Take a WebRTC call over from its dead owner (takeover.ts): true once it runs here. */
  takeOver(id: string): Promise<boolean>;
  /** True while this instance cannot reach its shared state (store or database): heartbeats answer `degraded`. */
  sharedStateDegraded(): boolean;
}

/**
 * Whether a stored call was a widget visitor's (keyless at its mint): the one meaning of `keyless` once the principal
 * is gone (a taken-over call, a row read back). Owners' calls (API key, playground, phone) are not.
 */
export function keylessSource(source: VoiceSource): boolean {
  return source === 'widget';
}

export function audienceOf(keyless: boolean): VoiceAudience {
  return keyless ? 'visitor' : 'owner';
}

import type { Logger } from '../../log/index.js';
import {
  isUsageRefusal,
  listVoiceGrants,
  reserveVoiceSeconds,
  settleVoiceSeconds,
  voiceBudgetAllows,
  voiceExemptions,
  VOICE_GRANT_SECONDS,
  type Meter,
  type VoiceGrant,
} from '../../metering/index.js';
import { voiceErrors } from '../errors.js';
import type { VoiceSource } from '../types.js';

/**
 * The voice-minutes and concurrency seam (docs/voice-protocol.md, usage). {@link meteredVoiceQuota} is the real one (metering's
 * voice grants); {@link noVoiceQuota} admits every call and records nothing (tests of other parts).
 */
export interface VoiceQuotaRequest {
  accountId: string;
  sessionId: string;
  assistantId: string;
  source: VoiceSource;
  /** Widget/playground callers: refusals must be 403 voice_unavailable, never a usage reason. */
  keyless: boolean;
}

export interface VoiceQuota {
  /** Before the provider session starts. Throws the refusal (402 / 429 / 403 voice_unavailable) to refuse. */
  admit(request: VoiceQuotaRequest): Promise<void>;
  /**
   * Called by the supervisor while the call runs with the provider's cumulative seconds; resolves false when the
   * allowance is used up, and the session then ends with `usage_limit`. Must be cheap (it is polled).
   */
  extend(request: VoiceQuotaRequest, usedSeconds: number): Promise<boolean>;
  /** Exactly once per admitted session, whoever ends it (owner, client, or the instance that found it orphaned). */
  settle(request: VoiceQuotaRequest, billableSeconds: number, usageFinalized: boolean): Promise<void>;
  /** A mint that failed after admission (provider unconfirmed): release without billing. */
  release(request: VoiceQuotaRequest): Promise<void>;
  /**
   * A call this instance took over from a dead one (a WebRTC call outlives its instance): its grants, as the database
   * has them, become this instance's, so the call is extended and settled here as if it had been admitted here.
   */
  resume?(request: VoiceQuotaRequest): Promise<void>;
  /**
   * The call stopped running here: its place under VOICE_MAX_CONCURRENT_SESSIONS is free at once, even when its
   * settlement waits for the database (a burst of ends must not hold the slots of calls that are over).
   */
  ended?(request: VoiceQuotaRequest): void;
  /**
   * The call goes on elsewhere (another instance took it over and settles it): drop what this instance held of its
   * grants, without settling them.
   */
  forget?(request: VoiceQuotaRequest): void;
  /**
   * Whether a call (run by any instance) still holds a grant: its place under the plan's concurrent calls is taken
   * until its settlement has closed every grant, which comes just after its row says it ended.
   */
  holdsGrant?(sessionId: string): Promise<boolean>;
}

export const noVoiceQuota: VoiceQuota = Object.freeze({
  admit: async () => undefined,
  extend: async () => true,
  settle: async () => undefined,
  release: async () => undefined,
});

export interface MeteredVoiceQuotaOptions {
  /** VOICE_MAX_CONCURRENT_SESSIONS: calls this instance may run at once, in every enforcement mode; 0 = no cap. */
  maxConcurrentSessions: number;
  /** Ask for the next grant this many seconds before the current one runs out. Default 60. */
  renewAheadSeconds?: number;
  /** Seconds per grant. Default 300. */
  grantSeconds?: number;
  log: Logger;
}

/** One grant of a running call: it covers the call's seconds [start, start + seconds). */
interface Block {
  grant: VoiceGrant;
  start: number;
  settled: boolean;
}

/** The grants of one call held by this instance. */
interface Chain {
  request: VoiceQuotaRequest;
  blocks: Block[];
  /** Seconds covered by every grant so far. */
  granted: number;
  /** The allowance refused the next grant: the call may use what it holds, then ends `usage_limit`. */
  exhausted: boolean;
  renewing: Promise<void> | undefined;
}

/**
 * Voice minutes and concurrency from metering (HOSTED_USAGE_ENFORCEMENT semantics live in
 * `reserveVoiceSeconds`):
 *
 * - admit: the per-instance cap (every mode; 429 `voice_concurrency_limit`, widget 403 `voice_unavailable`), then
 *   a first 300 s grant, which in `enforce` checks the plan's concurrent calls (429) and refuses when fewer than
 *   30 s are grantable (402 `voice_minutes_exhausted`; widget callers get 403 `voice_unavailable` for both).
 *   `shadow` grants and records, never refuses; `off` writes nothing. Owner playground voice is exempt from the
 *   minutes when VOICE_QUOTA_EXEMPT_PLAYGROUND (counted as playground seconds instead).
 * - extend (polled with the provider's cumulative seconds): a grant fully used is settled at its size; the next
 *   300 s are reserved `renewAheadSeconds` before the current grants run out. When the allowance refuses the next
 *   grant the call keeps what it holds and ends `usage_limit` once that is used up.
 * - settle: exactly once per call, from the provider's final usage: the open grants share what is left (the last
 *   one takes any overrun). A call held by a dead instance is settled from the grants recorded in the database.
 * - release: a mint that failed after admission gives its grant back unbilled.
 *
 * Grants go through Postgres, but never on the media path: admission is part of the mint, extensions run on the
 * supervisor's quota poll.
 */
export function meteredVoiceQuota(
  meter: Meter,
  options: MeteredVoiceQuotaOptions,
): VoiceQuota & { readonly localCalls: number; readonly heldCalls: number } {
  const chains = new Map<string, Chain>();
  /** Calls admitted on this instance and not yet settled or released (the per-instance cap counts them). */
  const local = new Set<string>();
  const renewAhead = options.renewAheadSeconds ?? 60;
  const grantSeconds = options.grantSeconds ?? VOICE_GRANT_SECONDS;
  const audienceOf = (r: VoiceQuotaRequest) => (r.keyless ? 'visitor' : 'owner') as 'visitor' | 'owner';

  const reserve = (request: VoiceQuotaRequest, first: boolean) =>
    reserveVoiceSeconds(meter, {
      accountId: request.accountId,
      sessionId: request.sessionId,
      source: request.source,
      audience: audienceOf(request),
      assistantId: request.assistantId,
      first,
      requestedSeconds: grantSeconds,
    });

  async function renew(chain: Chain): Promise<void> {
    try {
      const grant = await reserve(chain.request, false);
      chain.blocks.push({ grant, start: chain.granted, settled: false });
      chain.granted += grant.seconds;
    } catch (err) {
      // reserveVoiceSeconds throws only refusals it means (enforce mode): the minutes are used up.
      if (isUsageRefusal(err)) chain.exhausted = true;
      else throw err;
    }
  }

  /** Settle every grant the call used up entirely, except the newest (it keeps the call counted as active). */
  async function settleUsedBlocks(chain: Chain, used: number): Promise<void> {
    for (let i = 0; i < chain.blocks.length - 1; i++) {
      const block = chain.blocks[i]!;
      if (block.settled || used < block.start + block.grant.seconds) continue;
      block.settled = true;
      await settleVoiceSeconds(meter, block.grant, block.grant.seconds);
    }
  }

  return {
    get localCalls() {
      return local.size;
    },

    /** Calls whose grants this instance holds (tests: none is left once every call ended). */
    get heldCalls() {
      return chains.size;
    },

    forget(request) {
      local.delete(request.sessionId);
      chains.delete(request.sessionId);
    },

    async holdsGrant(sessionId) {
      return (await listVoiceGrants(meter, sessionId)).some((g) => g.status === 'open');
    },

    async admit(request) {
      const max = options.maxConcurrentSessions;
      if (max > 0 && local.size >= max)
        throw request.keyless ? voiceErrors.unavailable() : voiceErrors.instanceConcurrencyLimit(max);
      local.add(request.sessionId);
      try {
        const grant = await reserve(request, true);
        chains.set(request.sessionId, {
          request,
          blocks: [{ grant, start: 0, settled: false }],
          granted: grant.seconds,
          exhausted: false,
          renewing: undefined,
        });
      } catch (err) {
        local.delete(request.sessionId);
        throw err;
      }
    },

    async extend(request, usedSeconds) {
      const chain = chains.get(request.sessionId);
      if (chain === undefined) return true;
      await settleUsedBlocks(chain, usedSeconds);
      if (!chain.exhausted && usedSeconds >= chain.granted - renewAhead) {
        chain.renewing ??= renew(chain).finally(() => {
          chain.renewing = undefined;
        });
        await chain.renewing;
      }
      if (chain.exhausted && usedSeconds >= chain.granted) return false;
      // The hard stop: the money budget ran out (spend elsewhere, a lowered hard limit) before the grants did.
      const settled = chain.blocks.reduce((n, b) => n + (b.settled ? b.grant.seconds : 0), 0);
      return voiceBudgetAllows(meter, chain.blocks[0]!.grant, usedSeconds - settled);
    },

    ended(request) {
      local.delete(request.sessionId);
    },

    async resume(request) {
      if (chains.has(request.sessionId)) return;
      const exemptions = voiceExemptions(meter.config, request.source);
      const blocks: Block[] = [];
      let start = 0;
      for (const g of await listVoiceGrants(meter, request.sessionId)) {
        if (g.status !== 'open' && g.status !== 'settled') continue;
        const grant: VoiceGrant = {
          id: g.id,
          accountId: request.accountId,
          sessionId: request.sessionId,
          seconds: g.seconds,
          ...exemptions,
        };
        blocks.push({ grant, start, settled: g.status === 'settled' });
        start += g.seconds;
      }
      if (blocks.length === 0) return;
      local.add(request.sessionId);
      chains.set(request.sessionId, { request, blocks, granted: start, exhausted: false, renewing: undefined });
    },

    async settle(request, billableSeconds) {
      local.delete(request.sessionId);
      const chain = chains.get(request.sessionId);
      chains.delete(request.sessionId);
      const used = Math.max(0, Math.ceil(billableSeconds));
      if (chain !== undefined) {
        await chain.renewing?.catch(() => undefined);
        const open = chain.blocks.filter((b) => !b.settled);
        for (let i = 0; i < open.length; i++) {
          const block = open[i]!;
          const last = i === open.length - 1;
          const share = Math.max(0, used - block.start);
          block.settled = true;
          await settleVoiceSeconds(meter, block.grant, last ? share : Math.min(share, block.grant.seconds));
        }
        return;
      }
      // Not held here (the owner died): the grants in the database say what was settled already.
      const grants = await listVoiceGrants(meter, request.sessionId);
      let start = 0;
      const open: Array<{ id: string; start: number; seconds: number }> = [];
      for (const g of grants) {
        if (g.status === 'open') open.push({ id: g.id, start, seconds: g.seconds });
        start += g.seconds;
      }
      for (let i = 0; i < open.length; i++) {
        const block = open[i]!;
        const share = Math.max(0, used - block.start);
        await settleVoiceSeconds(meter, block.id, i === open.length - 1 ? share : Math.min(share, block.seconds));
      }
    },

    async release(request) {
      local.delete(request.sessionId);
      const chain = chains.get(request.sessionId);
      chains.delete(request.sessionId);
      if (chain === undefined) return;
      for (const block of chain.blocks) {
        if (block.grant.id !== null && !block.settled)
          await meter
            .release(block.grant.id)
            .catch((err: unknown) => options.log.error({ err }, 'releasing a voice grant failed'));
      }
    },
  };
}

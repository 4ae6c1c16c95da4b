import { AppError } from '../../src/errors/index.js';
import type { Sql } from '../../src/db/index.js';
import { captureLogger } from './log.js';
import { Meter, type Clock, type MeterConfig } from '../../src/metering/index.js';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date | string = new Date()) {
    this.ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(at: Date | string): void {
    this.ms = new Date(at).getTime();
  }
}

export const METER_DEFAULTS: MeterConfig = {
  HOSTED_USAGE_ENFORCEMENT: 'enforce',
  HOSTED_USAGE_DEFAULT_LIMIT_MICROS: 1_000_000,
  HOSTED_USAGE_MAX_OUTPUT_TOKENS: 4096,
  HOSTED_USAGE_RECONCILE_STALE_MINUTES: 15,
  HOSTED_USAGE_EXEMPT_PLAYGROUND: false,
  VOICE_QUOTA_EXEMPT_PLAYGROUND: true,
};

export function createTestMeter(
  sql: Sql,
  options: { config?: Partial<MeterConfig>; clock?: Clock; ingestionChunkMicros?: number } = {},
): { meter: Meter; logs: ReturnType<typeof captureLogger> } {
  const logs = captureLogger('debug');
  const meter = new Meter({
    sql,
    config: { ...METER_DEFAULTS, ...options.config },
    log: logs.log,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.ingestionChunkMicros !== undefined ? { ingestionChunkMicros: options.ingestionChunkMicros } : {}),
  });
  return { meter, logs };
}

/** The current balance row of an account (its hosting account's stored period). */
export async function balanceOf(sql: Sql, accountId: string) {
  const [row] = await sql<
    Array<{
      consumedMicros: number;
      reservedMicros: number;
      creditMicros: number;
      requestCount: number;
      voiceSecondsUsed: number;
      voiceSecondsReserved: number;
      playgroundVoiceSeconds: number;
      periodStart: Date;
    }>
  >`
    select b.consumed_micros, b.reserved_micros, b.credit_micros, b.request_count, b.voice_seconds_used, b.voice_seconds_reserved,
           b.playground_voice_seconds, b.period_start
    from usage_balances b join hosting_accounts h on h.account_id = b.account_id and h.period_start = b.period_start
    where b.account_id = ${accountId}`;
  return row;
}

/** Sets an account's plan and limit override directly (tests only). */
export async function setPlan(
  sql: Sql,
  accountId: string,
  planCode: string,
  limitOverrideMicros: number | null = null,
): Promise<void> {
  await sql`update hosting_accounts set plan_code = ${planCode}, limit_override_micros = ${limitOverrideMicros} where account_id = ${accountId}`;
}

/** The AppError a refused admission (or grant) rejects with; fails the test if the promise resolves. */
export async function refusalOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

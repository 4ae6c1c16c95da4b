import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestRecord } from '../http/index.js';
import type { RelayResidence } from '../providers/voice/index.js';
import { registerResidence } from './residence.js';

export type { RequestRecord };

/**
 * Parley's Prometheus metrics: one Registry per app (never prom-client's global one, so tests can run several apps
 * in one process). Labels are bounded: route patterns (never paths), error codes, end reasons, gate states.
 *
 * Counting costs nothing on the media path: relay frames and bytes, dropped audio and provider reconnects are read
 * at scrape time from the counters the relay and the provider session already keep (see `voiceSource`).
 */
export interface VoiceSource {
  /** Calls this instance runs now. */
  activeSessions(): number;
  /** Relay counters summed over closed and live relays. */
  relayTotals(): {
    callerFrames: number;
    callerBytes: number;
    assistantChunks: number;
    assistantSentBytes: number;
    assistantDroppedBytes: number;
  };
  /** Provider link reconnects summed over live sessions (ended ones are added by `sessionEnded`). */
  liveProviderReconnects(): number;
  /** How long the relay holds audio frames (the provider instance's figures), if measured. */
  residence?(): RelayResidence | undefined;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly mints: Counter<'outcome' | 'reason'>;
  private readonly ends: Counter<'reason'>;
  private readonly heartbeats: Counter<'status'>;
  private readonly gateDecisions: Counter<'state' | 'reason'>;
  private readonly endedReconnects: Counter;
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly durations: Histogram<'method' | 'route'>;
  private readonly reservations: Counter<'kind' | 'outcome'>;
  private readonly settlements: Counter<'kind'>;
  private readonly turnLatency: Histogram;
  private readonly firstAudio: Histogram;
  private voice: VoiceSource | undefined;

  /**
   * `instanceId`: every sample carries `instance_id="<INSTANCE_ID>"`, so figures scraped through a proxy, or summed
   * over a fleet, still say which instance they came from (named `instance_id`, not `instance`, which Prometheus sets
   * to the scrape target itself).
   */
  constructor(options: { defaultMetrics?: boolean; instanceId?: string } = {}) {
    if (options.instanceId !== undefined) this.registry.setDefaultLabels({ instance_id: options.instanceId });
    const registers = [this.registry];
    const source = () => this.voice;
    new Gauge({
      name: 'parley_voice_sessions_active',
      help: 'Voice calls this instance runs now.',
      registers,
      collect() {
        this.set(source()?.activeSessions() ?? 0);
      },
    });
    this.mints = new Counter({
      name: 'parley_voice_mints_total',
      help: 'Voice session mints by outcome (ok, refused: 4xx, failed: 5xx) and reason (error code).',
      labelNames: ['outcome', 'reason'],
      registers,
    });
    this.ends = new Counter({
      name: 'parley_voice_ends_total',
      help: "Voice sessions settled by this instance, by end reason (client: the caller hung up; control_lost: also a dead owner's calls, counted by the survivor that settled them).",
      labelNames: ['reason'],
      registers,
    });
    this.heartbeats = new Counter({
      name: 'parley_voice_heartbeats_total',
      help: 'Heartbeat answers by status (healthy, degraded, ended, lost, or the error code).',
      labelNames: ['status'],
      registers,
    });
    this.gateDecisions = new Counter({
      name: 'parley_voice_gate_decisions_total',
      help: 'Playback gate decisions by state and reason.',
      labelNames: ['state', 'reason'],
      registers,
    });
    this.endedReconnects = new Counter({
      name: 'parley_voice_provider_reconnects_ended_total',
      help: 'internal',
      registers: [],
    });
    const ended = this.endedReconnects;
    type Totals = ReturnType<VoiceSource['relayTotals']>;
    /** A counter read from the relay's own totals at scrape time, one value per label set. */
    const relay = (
      name: string,
      help: string,
      labelNames: string[],
      values: (t: Totals) => Array<[Record<string, string>, number]>,
    ) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          const totals = source()?.relayTotals();
          if (totals === undefined) return;
          this.reset();
          for (const [labels, value] of values(totals)) this.inc(labels, value);
        },
      });
    relay(
      'parley_voice_relay_frames_total',
      'Media frames relayed: in = caller audio frames, out = assistant audio chunks.',
      ['direction'],
      (t) => [
        [{ direction: 'in' }, t.callerFrames],
        [{ direction: 'out' }, t.assistantChunks],
      ],
    );
    relay(
      'parley_voice_relay_bytes_total',
      'Media bytes relayed: in = caller audio, out = assistant audio sent to callers.',
      ['direction'],
      (t) => [
        [{ direction: 'in' }, t.callerBytes],
        [{ direction: 'out' }, t.assistantSentBytes],
      ],
    );
    relay(
      'parley_voice_audio_dropped_bytes_total',
      'Assistant audio callers never got because they read too slowly.',
      [],
      (t) => [[{}, t.assistantDroppedBytes]],
    );
    registerResidence(this.registry, () => source()?.residence?.());
    new Counter({
      name: 'parley_voice_provider_reconnects_total',
      help: 'Voice provider link reconnects (resumed sessions).',
      registers,
      async collect() {
        this.reset();
        this.inc(((await ended.get()).values[0]?.value ?? 0) + (source()?.liveProviderReconnects() ?? 0));
      },
    });
    this.requests = new Counter({
      name: 'parley_http_requests_total',
      help: 'HTTP requests by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.durations = new Histogram({
      name: 'parley_http_request_duration_seconds',
      help: 'HTTP request duration by method and route pattern (streams: until the stream ends).',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.reservations = new Counter({
      name: 'parley_metering_reservations_total',
      help: 'Usage reservations (voice: grants) by kind and outcome (reserved, refused, failed).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.settlements = new Counter({
      name: 'parley_metering_settlements_total',
      help: 'Usage settlements by kind (voice: once per call).',
      labelNames: ['kind'],
      registers,
    });
    // Call timelines: each turn once, when its first answer audio reached the caller (never per frame).
    const turnBuckets = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 5, 10];
    this.turnLatency = new Histogram({
      name: 'parley_voice_turn_latency_seconds',
      help: "Voice turns: from the caller's end of speech to the first answer audio Parley wrote to the caller.",
      buckets: turnBuckets,
      registers,
    });
    this.firstAudio = new Histogram({
      name: 'parley_voice_time_to_first_audio_seconds',
      help: "Voice turns: from the provider having the caller's last audio to the answer's first audio reaching Parley.",
      buckets: turnBuckets,
      registers,
    });
    // Process CPU, memory, GC, handles and event-loop delay (nodejs_eventloop_lag_*; monitorEventLoopDelay).
    if (options.defaultMetrics !== false)
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
  }

  /** The voice side of this instance (set once the capability is built). */
  watchVoice(source: VoiceSource): void {
    this.voice = source;
  }

  mint(outcome: 'ok' | 'refused' | 'failed', reason: string): void {
    this.mints.inc({ outcome, reason });
  }

  sessionEnded(reason: string, providerReconnects: number): void {
    this.ends.inc({ reason });
    if (providerReconnects > 0) this.endedReconnects.inc(providerReconnects);
  }

  heartbeat(status: string): void {
    this.heartbeats.inc({ status });
  }

  gate(state: string, reason: string): void {
    this.gateDecisions.inc({ state, reason });
  }

  turn(latencyMs: number, firstAudioMs: number): void {
    this.turnLatency.observe(latencyMs / 1000);
    this.firstAudio.observe(firstAudioMs / 1000);
  }

  request(r: RequestRecord): void {
    const status = String(r.status);
    this.requests.inc({ method: r.method, route: r.route, status });
    this.durations.observe({ method: r.method, route: r.route }, r.durationMs / 1000);
  }

  reservation(kind: string, outcome: 'reserved' | 'refused' | 'failed'): void {
    this.reservations.inc({ kind, outcome });
  }

  settlement(kind: string): void {
    this.settlements.inc({ kind });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * The relays under test. Each one is started fresh for every concurrency level (so "empty process" RSS is clean),
 * in its own process pinned to the server cores, and exposes a WebSocket where a caller streams 960-byte PCM frames
 * and gets the echoed assistant audio back. Adding Parley's relay needed no change here: its driver speaks the
 * documented API and skips itself while the media socket answers 404.
 */
import { join } from 'node:path';
import { BENCH_DIR, probeLaunch, startChild, urlLine, type ProbeOptions } from '../harness/children.js';
import type { Child } from '../harness/children.js';
import { createAssistant, startParley, type ParleyBuild, type ParleyFixture } from '../harness/parley.js';
import type { ParleyTarget } from './parley-client.js';
import type { CallerProtocol } from './protocol.js';

/**
 * `parley-a<ms>`: Parley with VOICE_PROVIDER_APPEND_MS=<ms> in every shape (compare coalescing caps in one run; a0:
 * one append per caller frame, never held).
 * `parley-semi<MB>`: Parley with node --max-semi-space-size=<MB> (compare young-generation sizes in one run).
 * `parley-young<MB>`: Parley with a young generation of a fixed size: --min-semi-space-size and --max-semi-space-size
 * both <MB> (V8 otherwise grows it with the allocation rate, so RSS against N measures that growth too).
 */
export type RelayName =
  | 'direct'
  | 'parley'
  | 'uws-relay'
  | 'ws-relay'
  | `parley-a${number}`
  | `parley-semi${number}`
  | `parley-young${number}`;

export function isRelayName(name: string): name is RelayName {
  return ['direct', 'parley', 'uws-relay', 'ws-relay'].includes(name) || /^parley-(a|semi|young)\d{1,4}$/.test(name);
}

export interface StartedRelay {
  /** The server process whose CPU and RSS are measured; absent for `direct` (no relay). */
  server: Child | undefined;
  url?: string;
  parley?: ParleyTarget;
  /** Where the server's /metrics answers (Parley: the relay's residence histograms). */
  metrics?: { baseUrl: string; token: string };
  stop(): Promise<void>;
}

export interface RelayContext {
  simulatorUrl: string;
  serverCpus: number[] | undefined;
  parley?: { build: ParleyBuild; fixture: ParleyFixture } | undefined;
  /** Preload the heap / event-loop probe into the server (harness/probe.mjs). */
  probe?: ProbeOptions | undefined;
  /** Extra environment for Parley in this measurement (the shape decides VOICE_PROVIDER_APPEND_MS). */
  parleyEnv?: Record<string, string>;
  /** Node flags for Parley in this measurement, after the deployed ones (a later flag wins). */
  parleyNodeArgs?: string[];
}

export interface RelayUnderTest {
  name: RelayName;
  label: string;
  protocol: CallerProtocol;
  start(ctx: RelayContext): Promise<StartedRelay>;
}

function baseline(name: 'ws-relay' | 'uws-relay', label: string): RelayUnderTest {
  return {
    name,
    label,
    protocol: 'pcm',
    async start(ctx) {
      const launch = probeLaunch(ctx.probe);
      const server = await startChild({
        name,
        script: join(BENCH_DIR, 'baselines', `${name}.ts`),
        args: ['--simulator', ctx.simulatorUrl],
        // BENCH_BASELINE_NODE_ARGS: extra node flags for the baselines (profiling, like BENCH_PARLEY_NODE_ARGS).
        nodeArgs: [...launch.nodeArgs, ...(process.env.BENCH_BASELINE_NODE_ARGS ?? '').split(' ').filter(Boolean)],
        env: launch.env,
        cpus: ctx.serverCpus,
        ready: urlLine,
      });
      return { server, url: server.info, stop: () => server.stop() };
    },
  };
}

/** Thrown by a relay that cannot run in this tree yet; the scenario reports it as skipped with this message. */
export class SkipRelay extends Error {}

/** The implementation behind a relay name. */
export function relayOf(name: RelayName): RelayUnderTest {
  const fixed = RELAYS[name as keyof typeof RELAYS];
  if (fixed !== undefined) return fixed;
  const flags = nodeFlagsOf(name);
  if (flags !== undefined) {
    return {
      ...RELAYS.parley,
      name,
      label: `Parley with node ${flags.join(' ')}`,
      start: (ctx) => RELAYS.parley.start({ ...ctx, parleyNodeArgs: [...(ctx.parleyNodeArgs ?? []), ...flags] }),
    };
  }
  const appendMs = name.slice('parley-a'.length);
  return {
    ...RELAYS.parley,
    name,
    label: `Parley with VOICE_PROVIDER_APPEND_MS=${appendMs}`,
    start: (ctx) =>
      RELAYS.parley.start({ ...ctx, parleyEnv: { ...ctx.parleyEnv, VOICE_PROVIDER_APPEND_MS: appendMs } }),
  };
}

/** The young-generation flags of `parley-semi<MB>` and `parley-young<MB>` (after the deployed ones: a later flag wins). */
function nodeFlagsOf(name: RelayName): string[] | undefined {
  const semi = /^parley-semi(\d+)$/.exec(name);
  if (semi) return [`--max-semi-space-size=${semi[1]}`];
  const young = /^parley-young(\d+)$/.exec(name);
  if (young) return [`--min-semi-space-size=${young[1]}`, `--max-semi-space-size=${young[1]}`];
  return undefined;
}

const RELAYS: Record<'direct' | 'parley' | 'uws-relay' | 'ws-relay', RelayUnderTest> = {
  direct: {
    name: 'direct',
    label: 'straight to the simulator (GPT-Live, no relay)',
    protocol: 'gpt-live',
    start: async (ctx) => ({ server: undefined, url: ctx.simulatorUrl, stop: async () => undefined }),
  },
  parley: {
    name: 'parley',
    label: 'Parley (mint + media socket + heartbeats + gate)',
    protocol: 'parley',
    async start(ctx) {
      if (ctx.parley === undefined) throw new SkipRelay('Parley could not be prepared (see the log above)');
      const launch = probeLaunch(ctx.probe);
      const server = await startParley(ctx.parley.build, ctx.parley.fixture, ctx.simulatorUrl, ctx.serverCpus, {
        nodeArgs: [...launch.nodeArgs, ...(ctx.parleyNodeArgs ?? [])],
        env: { ...launch.env, ...ctx.parleyEnv },
      });
      const assistant = await createAssistant(server.info, ctx.parley.fixture.apiKey);
      if (typeof assistant === 'string') {
        await server.stop();
        throw new SkipRelay(`no assistant to mint for: ${assistant}`);
      }
      return {
        server,
        parley: { baseUrl: server.info, apiKey: ctx.parley.fixture.apiKey, assistantId: assistant.id },
        metrics: { baseUrl: server.info, token: ctx.parley.fixture.metricsToken },
        stop: () => server.stop(),
      };
    },
  },
  'uws-relay': baseline('uws-relay', 'bare uWS + Parley GPT-Live adapter (no control plane)'),
  'ws-relay': baseline('ws-relay', 'node:http + ws, JSON.stringify/parse (the usual way)'),
};

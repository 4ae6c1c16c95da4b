/**
 * HTTP scenario: wrk against bare uWS hello, node:http hello and Parley's routes (healthz, bearer GET of an
 * assistant through the Redis rate limiter, the voice mint against the simulator, keyless chat with the local
 * provider). Each Parley route is reported as a ratio of bare uWS hello requests per second.
 */
import { join } from 'node:path';
import { BENCH_DIR, startChild, urlLine, type Child } from '../harness/children.js';
import { BENCH_ORIGIN, createAssistant, startParley, type BenchAssistant, type ParleyBuild, type ParleyFixture } from '../harness/parley.js';
import { round } from '../harness/stats.js';
import { findWrk, runWrk, WRK_MISSING, type WrkOptions, type WrkRequest } from './wrk.js';

export type HttpTargetName = 'uws-hello' | 'node-hello' | 'parley-healthz' | 'parley-assistant-get' | 'parley-voice-mint' | 'parley-chat';

export interface HttpRun {
  target: HttpTargetName;
  label: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  connections?: number;
  requestsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  errors?: number;
  /** requests per second / bare uWS hello requests per second. */
  ratioToUws?: number;
}

export interface HttpOptions {
  seconds: number;
  serverCpus: number[] | undefined;
  generatorCpus: number[] | undefined;
  simulatorCpus: number[] | undefined;
  parley: { build: ParleyBuild; fixture: ParleyFixture } | undefined;
  parleyUnavailable?: string;
  log: (line: string) => void;
}

export interface HttpResult {
  status: 'ok' | 'skipped';
  reason?: string;
  wrk?: { threads: number };
  runs: HttpRun[];
}

const LABELS: Record<HttpTargetName, string> = {
  'uws-hello': 'bare uWS hello',
  'node-hello': 'node:http hello',
  'parley-healthz': 'Parley GET /healthz',
  'parley-assistant-get': 'Parley GET /api/v1/assistants/{id} (Bearer, Redis limiter)',
  'parley-voice-mint': 'Parley POST /api/v1/voice/sessions (mint, simulator)',
  'parley-chat': 'Parley POST /api/v1/chat (keyless, local provider)',
};

/** A 404 from the router itself (not a capability's "not found"): the route is not registered in this tree. */
async function probe(request: WrkRequest): Promise<string | undefined> {
  const res = await fetch(request.url, { method: request.method ?? 'GET', headers: request.headers ?? {}, ...(request.body === undefined ? {} : { body: request.body }) });
  const text = await res.text();
  if (res.status === 404 && text.includes('HTTP_NOT_FOUND')) return `${request.method ?? 'GET'} ${new URL(request.url).pathname} is not registered yet (router 404)`;
  if (res.status >= 400) return `probe answered ${res.status}: ${text.slice(0, 200)}`;
  return undefined;
}

export async function runHttpScenario(options: HttpOptions): Promise<HttpResult> {
  const wrk = findWrk();
  if (wrk === undefined) {
    options.log(WRK_MISSING);
    return { status: 'skipped', reason: WRK_MISSING, runs: [] };
  }
  const threads = Math.max(1, options.generatorCpus?.length ?? 1);
  const base: WrkOptions = { threads, connections: 64, seconds: options.seconds, cpus: options.generatorCpus };
  const runs: HttpRun[] = [];

  const measure = async (target: HttpTargetName, request: WrkRequest, wrkOptions: WrkOptions = base): Promise<void> => {
    options.log(`http: ${target}...`);
    try {
      const skip = await probe(request);
      if (skip !== undefined) {
        runs.push({ target, label: LABELS[target], status: 'skipped', reason: skip });
        options.log(`http: ${target} skipped: ${skip}`);
        return;
      }
      const report = await runWrk(wrk, request, wrkOptions);
      runs.push({
        target, label: LABELS[target], status: 'ok', connections: wrkOptions.connections,
        requestsPerSecond: round(report.requestsPerSecond, 0), p50Ms: round(report.p50Ms, 3), p99Ms: round(report.p99Ms, 3), errors: report.errors,
      });
    } catch (err) {
      runs.push({ target, label: LABELS[target], status: 'failed', reason: err instanceof Error ? err.message : String(err) });
    }
  };

  for (const hello of ['uws-hello', 'node-hello'] as const) {
    const server = await startChild({ name: hello, script: join(BENCH_DIR, 'baselines', `${hello}.ts`), cpus: options.serverCpus, ready: urlLine });
    try {
      await measure(hello, { url: server.info });
    } finally {
      await server.stop();
    }
  }

  if (options.parley === undefined) {
    for (const target of ['parley-healthz', 'parley-assistant-get', 'parley-voice-mint', 'parley-chat'] as const) {
      runs.push({ target, label: LABELS[target], status: 'skipped', reason: options.parleyUnavailable ?? 'Parley could not be prepared' });
    }
  } else {
    const simulator = await startChild({
      name: 'voice simulator',
      script: join(BENCH_DIR, '..', 'src/providers/voice/simulator/main.ts'),
      args: ['--port', '0'],
      cpus: options.simulatorCpus,
      ready: urlLine,
    });
    let parley: Child | undefined;
    try {
      parley = await startParley(options.parley.build, options.parley.fixture, simulator.info, options.serverCpus);
      const url = parley.info;
      const bearer = { authorization: `Bearer ${options.parley.fixture.apiKey}` };
      await measure('parley-healthz', { url: `${url}/healthz` });
      const assistant: BenchAssistant | string = await createAssistant(url, options.parley.fixture.apiKey);
      const noAssistant = typeof assistant === 'string' ? `no bench assistant: ${assistant}` : undefined;
      if (typeof assistant === 'string') {
        for (const target of ['parley-assistant-get', 'parley-voice-mint', 'parley-chat'] as const) {
          runs.push({ target, label: LABELS[target], status: 'skipped', reason: noAssistant! });
        }
      } else {
        await measure('parley-assistant-get', { url: `${url}/api/v1/assistants/${assistant.id}`, headers: bearer });
        // Keyless chat: the Origin must be on the assistant's allowedDomains; a fixed visitor (limits raised for the run).
        await measure('parley-chat', {
          url: `${url}/api/v1/chat`,
          method: 'POST',
          headers: { origin: BENCH_ORIGIN, 'content-type': 'application/json' },
          body: JSON.stringify({ assistantId: assistant.publicId, message: 'What are your opening hours?', visitorId: 'native-bench-visitor' }),
        });
        // Every mint starts a real provider session on the simulator: few connections, and it runs last.
        await measure(
          'parley-voice-mint',
          {
            url: `${url}/api/v1/voice/sessions`,
            method: 'POST',
            headers: { ...bearer, 'content-type': 'application/json' },
            body: JSON.stringify({ assistantId: assistant.id, capabilities: ['playback_gate'] }),
          },
          { ...base, connections: 8 },
        );
      }
    } catch (err) {
      options.log(`http: Parley failed: ${err instanceof Error ? err.message : String(err)}`);
      for (const target of ['parley-healthz', 'parley-assistant-get', 'parley-voice-mint', 'parley-chat'] as const) {
        if (!runs.some((r) => r.target === target)) runs.push({ target, label: LABELS[target], status: 'failed', reason: err instanceof Error ? err.message : String(err) });
      }
    } finally {
      await parley?.stop();
      await simulator.stop();
    }
  }

  const uws = runs.find((r) => r.target === 'uws-hello' && r.status === 'ok')?.requestsPerSecond;
  for (const run of runs) if (run.status === 'ok' && uws !== undefined) run.ratioToUws = round(run.requestsPerSecond! / uws, 3);
  return { status: 'ok', wrk: { threads }, runs };
}

/**
 * Phone scenario (`npm run bench -- --only=phone`): N simulated phone calls on one Parley instance, against N browser
 * WebSocket calls in the same run, on the same echoing assistant and the same audio (μ-law 8 kHz, synthetic speech at
 * real time). Both load generators are the SDK's (parley-loadtest's engine and the phone simulator's core), in this
 * process: the generator is included on the machine, as the target says. Reported per transport: calls answered,
 * dropped calls (answered but not ended by the caller, or not answered), Parley's CPU per call-second over the
 * measured window (/proc), the round trip; then barge-in: calls whose caller talks over the assistant, and from each
 * call's timeline the time from the gate closing for the caller's speech to the `clear` leaving Parley.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { startVoiceSimulator } from '../../src/providers/voice/index.js';
import { runLoadTest } from '../../sdk/src/cli/loadtest/run.js';
import { runPhoneCalls } from '../../sdk/src/cli/phone/run.js';
import { fromPcm16 } from '../../sdk/src/voice/formats.js';
import { syntheticSpeech } from '../../sdk/src/voice/pcm.js';
import { ROOT, sampleProcess, startSimulator, type Child } from '../harness/children.js';
import { startParley, type ParleyBuild, type ParleyFixture } from '../harness/parley.js';
import { percentile, round } from '../harness/stats.js';

export interface PhoneBenchOptions {
  calls: number;
  /** Seconds measured once every call is up. */
  windowS: number;
  rampUpS: number;
  /** Barge-in calls (their timelines give the clear latency). */
  bargeInCalls: number;
  serverCpus: number[] | undefined;
  simulatorCpus: number[] | undefined;
  parley: { build: ParleyBuild; fixture: ParleyFixture } | undefined;
  parleyUnavailable?: string;
  log: (line: string) => void;
}

export interface TransportRun {
  transport: 'websocket' | 'phone';
  calls: number;
  answered: number;
  dropped: number;
  /** Parley's CPU (user + system) per second of a live call over the window, ms. */
  cpuMsPerCallSecond: number | null;
  callsLiveInWindow: number;
  roundTripP50Ms: number | null;
  roundTripP95Ms: number | null;
  firstAudioP50Ms: number | null;
  maxSendLagMs: number;
  /** Why calls were not answered or ended early: refusals by reason, end reasons other than the caller's. */
  notAnswered: Record<string, number>;
}

export interface PhoneBenchResult {
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  audio: 'pcmu/8000';
  windowS: number;
  loadAverage: number[];
  runs: TransportRun[];
  bargeIn?: { calls: number; clears: number; clearAfterGateMs: { p50: number; p95: number; max: number } | null };
}

const MULAW = { format: 'pcmu', sampleRateHz: 8000 } as const;

class PlainWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { perMessageDeflate: false });
  }
}

async function api(url: string, key: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** A number on a new assistant with these instructions (made-up carrier credentials: the simulator is the carrier). */
async function numberFor(url: string, key: string, instructions: string, n: number) {
  const { assistant } = await api(url, key, '/api/v1/assistants', {
    name: `phone-bench-${n}`,
    instructions,
    settings: { voice: { enabled: true, recording: 'off', requireConsent: false, maxDurationSeconds: 3600 } },
  });
  const line = {
    number: `+1555${String(1_000_000 + n * 7919 + Math.floor(Math.random() * 1000)).slice(-7)}`,
    accountSid: `AC${'0123456789abcdef'.repeat(2)}`,
    authToken: `phone-bench-token-${n}-0123456789`,
  };
  await api(url, key, '/api/v1/phone-numbers', {
    phoneNumber: line.number,
    assistantId: assistant.publicId,
    provider: 'twilio',
    ...line,
  });
  return { assistant: assistant.publicId as string, ...line };
}

/** A key of the bench user that reads timelines (the fixture's key does not read conversations). */
function timelineKey(build: ParleyBuild, fixture: ParleyFixture): string {
  const args = [
    'key:create',
    '--email',
    'bench@bench.local',
    '--scopes',
    'conversations:read',
    '--name',
    'phone-bench',
  ];
  const nodeArgs = build.cli.endsWith('.ts') ? ['--import', 'tsx', build.cli] : [build.cli];
  const out = spawnSync(process.execPath, [...nodeArgs, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...fixture.env, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`key:create failed: ${out.stderr.slice(-300)}`);
  return String((JSON.parse(out.stdout.trim().split('\n').pop()!) as { secret: string }).secret);
}

/**
 * CPU of `pid` over the measured window, which starts `startMs` after now, and the calls live in it (their mean over
 * samples every 250 ms: calls still connecting or already gone count for the time they were live).
 */
function measureWindow(pid: number, startMs: number, windowMs: number, live: () => number) {
  return new Promise<{ cpuMs: number; live: number }>((resolve) => {
    setTimeout(() => {
      const a = sampleProcess(pid);
      const counts: number[] = [live()];
      const sampler = setInterval(() => counts.push(live()), 250);
      setTimeout(() => {
        clearInterval(sampler);
        const b = sampleProcess(pid);
        counts.push(live());
        resolve({ cpuMs: b.cpuMs - a.cpuMs, live: counts.reduce((x, y) => x + y, 0) / counts.length });
      }, windowMs);
    }, startMs);
  });
}

export async function runPhoneScenario(o: PhoneBenchOptions): Promise<PhoneBenchResult> {
  const empty = { audio: 'pcmu/8000' as const, windowS: o.windowS, loadAverage: loadavg(), runs: [] };
  if (o.parley === undefined)
    return { status: 'skipped', reason: o.parleyUnavailable ?? 'Parley could not be prepared', ...empty };
  // The provider of the load: a simulator process of its own (its CPU is not Parley's nor the generators').
  const simulator = await startSimulator(o.simulatorCpus);
  let parley: Child;
  try {
    parley = await startBenchParley(o, simulator.info);
  } catch (err) {
    await simulator.stop();
    throw err;
  }
  const key = o.parley.fixture.apiKey;
  const url = parley.info;
  const speech = fromPcm16(syntheticSpeech({ utterances: 4, speechMs: 1500, pauseMs: 2500, seed: 7 }), MULAW);
  const rampUpMs = o.rampUpS * 1000;
  const windowMs = o.windowS * 1000;
  // Every call is up 1 s after the ramp; the window follows; then 1 s before the callers hang up.
  const durationMs = rampUpMs + 1000 + windowMs + 1000;
  const runs: TransportRun[] = [];
  try {
    const echo = await numberFor(url, key, 'Echo. [sim:echo]', 1);

    o.log(`phone bench: ${o.calls} WebSocket calls (μ-law), ${o.windowS} s measured`);
    let wsLive = 0;
    const wsWindow = measureWindow(parley.pid, rampUpMs + 1000, windowMs, () => wsLive);
    const ws = await runLoadTest(
      {
        url,
        assistantId: echo.assistant,
        apiKey: key,
        origin: undefined,
        sign: false,
        recordingConsent: false,
        calls: o.calls,
        chats: 0,
        chatMessage: '',
        rampUpMs,
        durationMs,
        callMs: undefined,
        inputPath: undefined,
        audio: MULAW,
        json: true,
        reportPath: undefined,
        yes: true,
        quiet: true,
      },
      speech,
      { WebSocket: PlainWebSocket, inputLabel: 'synthetic speech', onProgress: (p) => (wsLive = p.activeCalls) },
    );
    const wsCpu = await wsWindow;
    const wsEndedByCaller = ws.voice.endReasons['client'] ?? 0;
    runs.push({
      transport: 'websocket',
      calls: o.calls,
      answered: ws.voice.connected,
      dropped: o.calls - wsEndedByCaller,
      cpuMsPerCallSecond: wsCpu.live > 0 ? round(wsCpu.cpuMs / (wsCpu.live * o.windowS), 3) : null,
      callsLiveInWindow: round(wsCpu.live, 1),
      roundTripP50Ms: ws.voice.roundTripMs?.p50 ?? null,
      roundTripP95Ms: ws.voice.roundTripMs?.p95 ?? null,
      firstAudioP50Ms: ws.voice.firstAudioMs?.p50 ?? null,
      maxSendLagMs: ws.voice.audio.maxSendLagMs,
      notAnswered: { ...ws.voice.refusals, ...ws.voice.errors },
    });

    o.log(`phone bench: ${o.calls} phone calls, ${o.windowS} s measured`);
    let phoneLive = 0;
    const phoneWindow = measureWindow(parley.pid, rampUpMs + 1000, windowMs, () => phoneLive);
    const phone = await runPhoneCalls({ url, ...echo, calls: o.calls, durationMs, rampUpMs, sharedEnd: true }, speech, {
      inputLabel: 'synthetic speech',
      onProgress: (p) => (phoneLive = p.active),
    });
    const phoneCpu = await phoneWindow;
    runs.push({
      transport: 'phone',
      calls: o.calls,
      answered: phone.summary.streamed,
      dropped: phone.calls.filter((c) => c.endReason !== 'hangup').length,
      cpuMsPerCallSecond: phoneCpu.live > 0 ? round(phoneCpu.cpuMs / (phoneCpu.live * o.windowS), 3) : null,
      callsLiveInWindow: round(phoneCpu.live, 1),
      roundTripP50Ms: phone.summary.roundTripMs?.p50 ?? null,
      roundTripP95Ms: phone.summary.roundTripMs?.p95 ?? null,
      firstAudioP50Ms: phone.summary.firstAudioMs?.p50 ?? null,
      maxSendLagMs: phone.summary.maxSendLagMs,
      notAnswered: {
        ...Object.fromEntries(Object.entries(phone.summary.endReasons).filter(([k]) => k !== 'hangup')),
        ...phone.summary.errors,
      },
    });

    const bargeIn = await clearLatency(key, timelineKey(o.parley.build, o.parley.fixture), o);
    const result: PhoneBenchResult = { status: 'ok', ...empty, loadAverage: loadavg(), runs, bargeIn };
    for (const r of runs)
      o.log(
        `  ${r.transport.padEnd(9)} answered ${r.answered}/${r.calls}, dropped ${r.dropped}, CPU ${r.cpuMsPerCallSecond} ms per call-second ` +
          `(${r.callsLiveInWindow} live), round trip p50 ${r.roundTripP50Ms} ms p95 ${r.roundTripP95Ms} ms, send lag max ${r.maxSendLagMs} ms; ` +
          `not answered: ${JSON.stringify(r.notAnswered)}`,
      );
    o.log(`  clear after the gate closed: ${JSON.stringify(bargeIn.clearAfterGateMs)} (${bargeIn.clears} clears)`);
    return result;
  } catch (err) {
    return { status: 'failed', reason: err instanceof Error ? err.message : String(err), ...empty, runs };
  } finally {
    await parley.stop();
    await simulator.stop();
  }
}

/**
 * Parley on the fixture. Admission's shedding is off as the fixture's rate limits are: the bench measures the calls,
 * not the refusals of a busy machine (a loaded event loop would shed mints within the ramp).
 */
function startBenchParley(o: PhoneBenchOptions, simulatorUrl: string): Promise<Child> {
  return startParley(o.parley!.build, o.parley!.fixture, simulatorUrl, o.serverCpus, {
    env: {
      VOICE_MAX_CONCURRENT_SESSIONS: String(o.calls * 2 + 50),
      VOICE_PROVIDER_APPEND_MS: '0',
      ADMISSION_MINT_QUEUE_WAIT_MS: '60000',
      ADMISSION_LOOP_DELAY_MS: '10000',
    },
  });
}

/**
 * Callers who talk over the answer: 0.6 s question, 0.5 s pause, then 1 s more while the assistant answers (4 s,
 * looped). From each call's timeline: every `clear` against the `gate_closed` before it.
 */
async function clearLatency(key: string, readKey: string, o: PhoneBenchOptions) {
  // A provider answering 1.8 s of speech at twice real time, cut when the caller talks over it (in this process: the
  // load is over), and a Parley of its own on it.
  const sim = await startVoiceSimulator({ transcriptChunkMs: 100, wordMs: 600, outputFrameIntervalMs: 10 });
  const parley = await startBenchParley(o, sim.url).catch(async (err: unknown) => {
    await sim.close();
    throw err;
  });
  try {
    return await clearLatencyOn(parley.info, key, readKey, o);
  } finally {
    await parley.stop();
    await sim.close();
  }
}

async function clearLatencyOn(url: string, key: string, readKey: string, o: PhoneBenchOptions) {
  const line = await numberFor(url, key, 'Be brief. [sim:barge-in]', 2);
  const pcm = new Uint8Array(4 * 24_000 * 2);
  const voiced = syntheticSpeech({ utterances: 1, speechMs: 1000, pauseMs: 0, seed: 3 });
  pcm.set(voiced.subarray(0, 0.6 * 48_000), 0);
  pcm.set(voiced, 1.1 * 48_000);
  o.log(`phone bench: ${o.bargeInCalls} calls talking over the assistant`);
  const run = await runPhoneCalls(
    { url, ...line, calls: o.bargeInCalls, durationMs: 8000, rampUpMs: 1000 },
    fromPcm16(pcm, MULAW),
    { inputLabel: 'barge-in script' },
  );
  const latencies: number[] = [];
  for (const call of run.calls) {
    if (call.sessionId === null) continue;
    const timeline = await api(url, readKey, `/api/v1/voice/sessions/${call.sessionId}/timeline`);
    const events = timeline.events as { atMs: number; type: string }[];
    for (const clear of events.filter((e) => e.type === 'clear')) {
      const closed = events.filter((e) => e.type === 'gate_closed' && e.atMs <= clear.atMs).pop();
      if (closed !== undefined) latencies.push(clear.atMs - closed.atMs);
    }
  }
  latencies.sort((a, b) => a - b);
  return {
    calls: run.summary.streamed,
    clears: run.summary.clears,
    clearAfterGateMs:
      latencies.length === 0
        ? null
        : { p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: latencies[latencies.length - 1]! },
  };
}

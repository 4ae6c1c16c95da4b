import { loadavg } from 'node:os';
import { WebSocket } from 'ws';
import { WebRtcCaller } from '../../test/providers/voice/webrtc-caller.js';
import { sampleProcess, startSimulator, type Child } from '../harness/children.js';
import { createAssistant, startParley, type ParleyBuild, type ParleyFixture } from '../harness/parley.js';

/**
 * `npm run bench -- --only=webrtc`: Parley's own CPU per call-second, WebRTC vs the WebSocket relay, on one instance
 * against the simulator (in a process of its own, as are the callers: only Parley's process is measured, from /proc).
 *
 * For each transport, `calls` calls are minted and joined; each caller talks and listens in turns (speech for 1 s,
 * then silence while the assistant answers, over and over: a conversation's shape) and heartbeats at the interval the
 * mint gives. After a warm-up, Parley's CPU (user + system, every thread) over `windowSeconds` is divided by the
 * call-seconds in the window. An idle window of the same length (no calls) is measured first: its CPU per second is
 * the instance's floor (timers, renewals), shown apart. A WebRTC call's audio goes caller <-> provider directly, so
 * its figure is its control plane: the sideband (the reflected audio both ways, transcripts, usage) and supervision.
 *
 * Figures are printed and returned; nothing is asserted. The machine's load average is part of the result: on a
 * shared machine the figures measure other work too.
 */
export interface WebRtcBenchOptions {
  calls: number;
  windowSeconds: number;
  warmupSeconds: number;
  build: ParleyBuild;
  fixture: ParleyFixture;
  serverCpus: number[] | undefined;
  simulatorCpus: number[] | undefined;
  log: (line: string) => void;
}

export interface TransportFigures {
  calls: number;
  windowSeconds: number;
  /** Parley's CPU in the window, ms. */
  cpuMs: number;
  /** Parley's CPU per call-second, ms (the idle floor included). */
  cpuMsPerCallSecond: number;
  /** The same with the idle floor taken out. */
  cpuMsPerCallSecondAboveIdle: number;
  /** Calls that heard the assistant during the window (a call that did not is not a measured call). */
  callsHearingTheAssistant: number;
  rssMb: number;
}

export interface WebRtcBenchResult {
  load1: { before: number; after: number };
  idleCpuMsPerSecond: number;
  websocket: TransportFigures;
  webrtc: TransportFigures;
  /** WebRTC's CPU per call-second over the relay's (above idle). */
  webrtcOverWebsocket: number;
}

interface BenchCall {
  heard(): number;
  stop(): Promise<void>;
}

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function mint(base: string, apiKey: string, publicId: string, transport?: unknown): Promise<any> {
  const res = await fetch(`${base}/api/v1/voice/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      assistantId: publicId,
      capabilities: ['heartbeat', 'playback_gate'],
      ...(transport === undefined ? {} : { transport }),
    }),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`mint answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** Heartbeats at the interval the mint gave, and the end. */
function control(base: string, apiKey: string, minted: any): { stop(): Promise<void> } {
  const every = Number(minted.heartbeatIntervalMs ?? 5000);
  const timer = setInterval(() => {
    void fetch(`${base}/api/v1/voice/sessions/${minted.sessionId}/heartbeat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: minted.controlToken }),
    })
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
  }, every);
  return {
    async stop() {
      clearInterval(timer);
      await fetch(`${base}/api/v1/voice/sessions/${minted.sessionId}/end`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: '{}',
      })
        .then((r) => r.arrayBuffer())
        .catch(() => undefined);
    },
  };
}

/** A relayed caller: 20 ms PCM16 frames over the media socket, a loud tone for 1 s then silence for 1.5 s. */
async function websocketCall(base: string, apiKey: string, publicId: string): Promise<BenchCall> {
  const minted = await mint(base, apiKey, publicId);
  const url = `${base.replace(/^http/, 'ws')}/api/v1/voice/sessions/${minted.sessionId}/stream?token=${encodeURIComponent(minted.controlToken)}`;
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let heardBytes = 0;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) heardBytes += data.length;
  });
  const loud = Buffer.alloc(960);
  for (let i = 0; i < 480; i++) loud.writeInt16LE(i % 40 < 20 ? 8000 : -8000, i * 2);
  const quiet = Buffer.alloc(960);
  let frame = 0;
  const timer = setInterval(() => {
    if (ws.readyState === ws.OPEN) ws.send(frame++ % 125 < 50 ? loud : quiet);
  }, 20);
  const ctl = control(base, apiKey, minted);
  return {
    heard: () => heardBytes,
    async stop() {
      clearInterval(timer);
      await ctl.stop();
      ws.terminate();
    },
  };
}

/** A WebRTC caller (a real peer, as in the tests): the same 1 s of tone, then 1.5 s of silence, over RTP. */
async function webrtcCall(base: string, apiKey: string, publicId: string): Promise<BenchCall> {
  const caller = new WebRtcCaller();
  const minted = await mint(base, apiKey, publicId, { type: 'webrtc', sdp: await caller.offer() });
  caller.answer(minted.transport.sdp);
  let voiced = true;
  caller.talk(true);
  const turns = setInterval(() => caller.talk((voiced = !voiced)), 1250);
  const ctl = control(base, apiKey, minted);
  return {
    heard: () => caller.voicedPacketsIn,
    async stop() {
      clearInterval(turns);
      await ctl.stop();
      caller.close();
    },
  };
}

async function measure(
  name: string,
  parley: Child,
  options: WebRtcBenchOptions,
  start: () => Promise<BenchCall>,
  idleCpuMsPerSecond: number,
): Promise<TransportFigures> {
  const { calls, windowSeconds, log } = options;
  const live: BenchCall[] = [];
  try {
    for (let i = 0; i < calls; i++) live.push(await start());
    log(`${name}: ${calls} calls joined; warming up ${options.warmupSeconds} s`);
    await sleep(options.warmupSeconds * 1000);
    const heardAtStart = live.map((c) => c.heard());
    const before = sampleProcess(parley.pid);
    await sleep(windowSeconds * 1000);
    const after = sampleProcess(parley.pid);
    const seconds = (after.at - before.at) / 1000;
    const cpuMs = after.cpuMs - before.cpuMs;
    const callSeconds = calls * seconds;
    const figures: TransportFigures = {
      calls,
      windowSeconds: round(seconds, 2),
      cpuMs: round(cpuMs, 1),
      cpuMsPerCallSecond: round(cpuMs / callSeconds),
      cpuMsPerCallSecondAboveIdle: round(Math.max(0, cpuMs - idleCpuMsPerSecond * seconds) / callSeconds),
      callsHearingTheAssistant: live.filter((c, i) => c.heard() > heardAtStart[i]!).length,
      rssMb: round(after.rssBytes / 1048576, 1),
    };
    log(`${name}: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await Promise.all(live.map((c) => c.stop()));
  }
}

export async function runWebRtcBench(options: WebRtcBenchOptions): Promise<WebRtcBenchResult> {
  const { log } = options;
  const load1Before = round(loadavg()[0]!, 2);
  const simulator = await startSimulator(options.simulatorCpus);
  let parley: Child | undefined;
  try {
    parley = await startParley(options.build, options.fixture, simulator.info, options.serverCpus);
    const assistant = await createAssistant(parley.info, options.fixture.apiKey);
    if (typeof assistant === 'string') throw new Error(assistant);
    await sleep(2000);
    const idleBefore = sampleProcess(parley.pid);
    await sleep(options.windowSeconds * 1000);
    const idleAfter = sampleProcess(parley.pid);
    const idleCpuMsPerSecond = (idleAfter.cpuMs - idleBefore.cpuMs) / ((idleAfter.at - idleBefore.at) / 1000);
    log(`idle: ${round(idleCpuMsPerSecond, 2)} ms of CPU per second`);
    const base = parley.info;
    const { apiKey } = options.fixture;
    const websocket = await measure(
      'websocket',
      parley,
      options,
      () => websocketCall(base, apiKey, assistant.publicId),
      idleCpuMsPerSecond,
    );
    const webrtc = await measure(
      'webrtc',
      parley,
      options,
      () => webrtcCall(base, apiKey, assistant.publicId),
      idleCpuMsPerSecond,
    );
    return {
      load1: { before: load1Before, after: round(loadavg()[0]!, 2) },
      idleCpuMsPerSecond: round(idleCpuMsPerSecond, 2),
      websocket,
      webrtc,
      webrtcOverWebsocket: round(
        webrtc.cpuMsPerCallSecondAboveIdle / Math.max(0.001, websocket.cpuMsPerCallSecondAboveIdle),
        2,
      ),
    };
  } finally {
    await parley?.stop();
    await simulator.stop();
  }
}

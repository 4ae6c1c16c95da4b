/**
 * CPU cost of the voice provider adapter per relayed 20 ms frame, each direction, next to a naive baseline.
 *
 *   npx tsx native-bench/voice-provider-frames.ts [--sessions 50] [--seconds 5] [--iterations 200000]
 *
 * Part 1 (codec, no sockets): caller->provider = build the `session.input_audio.append` frame;
 *   provider->caller = turn a received `session.output_audio.delta` frame into PCM.
 *   Adapter: prefix + base64 + suffix / byte-level fast path.  Baseline: JSON.stringify / JSON.parse + Buffer.from.
 * Part 2 (end to end): N sessions stream 20 ms frames at real time through a standalone simulator in echo mode
 *   (a child process, so its CPU is not counted). Reports this process's CPU per round trip (one frame each way,
 *   socket work included) and round-trip latency, adapter vs a plain `ws` client doing the naive thing.
 * Part 3 (`--windows 0,40,100`): the caller->provider leg alone at each append window (VOICE_PROVIDER_APPEND_MS),
 *   rounds interleaved (`--rounds`, default 3): this process's CPU per session-second and the relay's residence
 *   figures (working p50/p99, the window's wait p50/p99), i.e. what each window buys in CPU and costs in latency.
 * Figures are printed, never asserted. Never imported by src/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { WebSocket } from 'ws';
import {
  createVoiceProvider,
  residenceNow,
  type RelayResidence,
  type VoiceSession,
} from '../src/providers/voice/index.js';
import { decodeOutputAudioFast, encodeAudioAppend } from '../src/providers/voice/protocol.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '5' },
    iterations: { type: 'string', default: '200000' },
    windows: { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
const SESSIONS = Number(values.sessions);
const SECONDS = Number(values.seconds);
const ITERATIONS = Number(values.iterations);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const frame = Buffer.alloc(960);
for (let i = 0; i < 480; i++) frame.writeInt16LE(Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 24000)), i * 2);
const outputFrame = Buffer.from(`{"type":"session.output_audio.delta","delta":"${frame.toString('base64')}"}`);

function cpuNsPer(iterations: number, fn: () => void): number {
  for (let i = 0; i < 10_000; i++) fn(); // warm up the JIT
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) fn();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / iterations;
}

let sink = 0;
const codec = {
  inAdapter: cpuNsPer(ITERATIONS, () => (sink += encodeAudioAppend(frame).length)),
  inBaseline: cpuNsPer(
    ITERATIONS,
    () => (sink += JSON.stringify({ type: 'session.input_audio.append', audio: frame.toString('base64') }).length),
  ),
  outAdapter: cpuNsPer(ITERATIONS, () => (sink += decodeOutputAudioFast(outputFrame)!.length)),
  outBaseline: cpuNsPer(ITERATIONS, () => {
    const event = JSON.parse(outputFrame.toString('utf8')) as { type: string; delta: string };
    if (event.type === 'session.output_audio.delta') sink += Buffer.from(event.delta, 'base64').length;
  }),
};

function row(label: string, adapter: number, baseline: number, unit: string): string {
  return `${label.padEnd(34)} ${adapter.toFixed(0).padStart(8)} ${unit}  ${baseline.toFixed(0).padStart(8)} ${unit}  ${(baseline / adapter).toFixed(2).padStart(6)}x`;
}

console.log(`\nvoice provider frames (20 ms PCM16 24 kHz = 960 B; node ${process.version})`);
console.log(`\nPart 1: codec CPU per frame, ${ITERATIONS} iterations`);
console.log(`${''.padEnd(34)} ${'adapter'.padStart(11)}  ${'naive'.padStart(11)}  ${'ratio'.padStart(7)}`);
console.log(row('caller -> provider (append)', codec.inAdapter, codec.inBaseline, 'ns'));
console.log(row('provider -> caller (delta)', codec.outAdapter, codec.outBaseline, 'ns'));

// ---- Part 2 ---------------------------------------------------------------------------------------------

async function startSimulator(echo: boolean): Promise<{ url: string; child: ChildProcess }> {
  const args = [join(root, 'src/providers/voice/simulator/main.ts'), '--port', '0', ...(echo ? ['--echo'] : [])];
  const child = spawn(join(root, 'node_modules', '.bin', 'tsx'), args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    if (out.includes('\n')) break;
  }
  return { url: out.split('\n')[0]!, child };
}

interface Link {
  send(pcm: Buffer): void;
  close(): Promise<void>;
}

interface Measure {
  received: number;
  rtts: number[];
}

/** Stamp the send time into the frame so the echo tells its own round trip. */
function stamp(pcm: Buffer): Buffer {
  pcm.writeDoubleLE(performance.now(), 0);
  return pcm;
}

function onEcho(measure: Measure, pcm: Buffer): void {
  measure.received++;
  if ((measure.received & 7) === 0) measure.rtts.push(performance.now() - pcm.readDoubleLE(0));
}

let lastResidence: RelayResidence | undefined;

async function adapterLinks(url: string, measure: Measure, appendMs = 0): Promise<Link[]> {
  const provider = createVoiceProvider({ kind: 'simulator', url, keepaliveMs: 0, appendMs });
  lastResidence = provider.residence;
  const handlers = { onOutputAudio: (pcm: Buffer) => onEcho(measure, pcm) };
  const sessions: VoiceSession[] = await Promise.all(
    Array.from({ length: SESSIONS }, () => provider.startSession({}, { handlers })),
  );
  return sessions.map((s) => ({
    send: (pcm) => void s.sendAudio(pcm, residenceNow()),
    close: async () => void (await s.close()),
  }));
}

async function naiveLinks(url: string, measure: Measure): Promise<Link[]> {
  return Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      ws.send(
        JSON.stringify({
          type: 'session.start',
          session: { model: 'gpt-live-1', client: { data_channel: { allowed_client_events: [] } } },
        }),
      );
      await new Promise<void>((resolve) => ws.once('message', () => resolve()));
      ws.on('message', (data: Buffer) => {
        const event = JSON.parse(data.toString('utf8')) as { type: string; delta?: string };
        if (event.type === 'session.output_audio.delta') onEcho(measure, Buffer.from(event.delta!, 'base64'));
      });
      return {
        send: (pcm: Buffer) =>
          ws.send(JSON.stringify({ type: 'session.input_audio.append', audio: pcm.toString('base64') })),
        close: async () => {
          ws.close();
          await new Promise((resolve) => ws.once('close', resolve));
        },
      };
    }),
  );
}

/** echo=false: silent frames into a non-echo simulator, so only the caller->provider direction costs anything. */
async function run(name: string, open: (url: string, m: Measure) => Promise<Link[]>, url: string, echo: boolean) {
  const measure: Measure = { received: 0, rtts: [] };
  const links = await open(url, measure);
  const pcm = echo ? Buffer.from(frame) : Buffer.alloc(960);
  let sent = 0;
  const tick = (): void => {
    for (const link of links) link.send(echo ? stamp(pcm) : pcm);
    sent += links.length;
  };
  // One shared 20 ms clock for all sessions: the relay's pacing, identical for both clients.
  let timer = setInterval(tick, 20);
  await new Promise((resolve) => setTimeout(resolve, 500)); // settle
  measure.received = 0;
  measure.rtts = [];
  sent = 0;
  const cpu = process.cpuUsage();
  const began = performance.now();
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - began;
  const frames = echo ? measure.received : sent;
  clearInterval(timer);
  timer = undefined as never;
  await Promise.all(links.map((l) => l.close()));
  const sorted = measure.rtts.sort((a, b) => a - b);
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  return {
    name,
    frames,
    usPerFrame: (used.user + used.system) / Math.max(1, frames),
    cpuShare: (used.user + used.system) / 1000 / wall,
    p50: pct(0.5),
    p99: pct(0.99),
  };
}

const echoSim = await startSimulator(true);
const sinkSim = await startSimulator(false);
try {
  const naiveIn = await run('naive ws + JSON', naiveLinks, sinkSim.url, false);
  const adapterIn = await run('adapter', adapterLinks, sinkSim.url, false);
  const naive = await run('naive ws + JSON', naiveLinks, echoSim.url, true);
  const adapter = await run('adapter', adapterLinks, echoSim.url, true);
  const ns = (r: { usPerFrame: number }) => r.usPerFrame * 1000;
  console.log(`\nPart 2: ${SESSIONS} sessions x 50 frames/s x ${SECONDS} s through a simulator in a separate process`);
  console.log(`(socket work included; provider->caller = round trip minus caller->provider)`);
  console.log(`${''.padEnd(34)} ${'adapter'.padStart(11)}  ${'naive'.padStart(11)}  ${'ratio'.padStart(7)}`);
  console.log(row('caller -> provider, CPU/frame', ns(adapterIn), ns(naiveIn), 'ns'));
  console.log(row('provider -> caller, CPU/frame', ns(adapter) - ns(adapterIn), ns(naive) - ns(naiveIn), 'ns'));
  console.log(row('round trip (echo), CPU/frame', ns(adapter), ns(naive), 'ns'));
  console.log(
    `${'frames measured (in / round trip)'.padEnd(34)} ${`${adapterIn.frames}/${adapter.frames}`.padStart(11)}  ${`${naiveIn.frames}/${naive.frames}`.padStart(11)}`,
  );
  console.log(
    `${'process CPU share (echo run)'.padEnd(34)} ${(adapter.cpuShare * 100).toFixed(1).padStart(10)}%  ${(naive.cpuShare * 100).toFixed(1).padStart(10)}%`,
  );
  console.log(
    `${'echo RTT p50 / p99 (ms)'.padEnd(34)} ${`${adapter.p50.toFixed(2)}/${adapter.p99.toFixed(2)}`.padStart(11)}  ${`${naive.p50.toFixed(2)}/${naive.p99.toFixed(2)}`.padStart(11)}`,
  );
  if (values.windows !== undefined) await appendWindows(values.windows.split(',').map(Number), sinkSim.url);
  console.log(`\n(sink ${sink % 10})`);
} finally {
  echoSim.child.kill('SIGTERM');
  sinkSim.child.kill('SIGTERM');
}

async function appendWindows(windows: number[], url: string): Promise<void> {
  const rounds = Number(values.rounds);
  const results = new Map<number, Array<{ cpuMsPerSessionS: number; res: RelayResidence }>>();
  for (let round = 0; round < rounds; round++) {
    // Interleaved, in reverse order every other round, so a drift of the machine's load hits every window alike.
    const order = round % 2 === 0 ? windows : [...windows].reverse();
    for (const appendMs of order) {
      const r = await run(`a${appendMs}`, (u, m) => adapterLinks(u, m, appendMs), url, false);
      const list = results.get(appendMs) ?? [];
      list.push({ cpuMsPerSessionS: (r.cpuShare * 1000) / SESSIONS, res: lastResidence! });
      results.set(appendMs, list);
    }
  }
  const med = (v: number[]): number => {
    const s = [...v].sort((a, b) => a - b);
    return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  console.log(
    `\nPart 3: caller -> provider at each append window, ${SESSIONS} sessions x ${SECONDS} s, ${rounds} rounds`,
  );
  console.log('(CPU: this process, median [min-max] over rounds; residence ms: working p50/p99, window wait p50/p99)');
  for (const appendMs of windows) {
    const list = results.get(appendMs)!;
    const cpu = list.map((x) => x.cpuMsPerSessionS);
    const q = (f: (r: RelayResidence) => number): string => med(list.map((x) => f(x.res) * 1000)).toFixed(3);
    console.log(
      `APPEND_MS=${String(appendMs).padEnd(4)} CPU ${med(cpu).toFixed(3)} [${Math.min(...cpu).toFixed(3)}-${Math.max(...cpu).toFixed(3)}] ms/session-s` +
        `  working ${q((r) => r.callerToProvider.quantile(0.5))}/${q((r) => r.callerToProvider.quantile(0.99))}` +
        `  wait ${appendMs === 0 ? '-' : `${q((r) => r.appendWindow.quantile(0.5))}/${q((r) => r.appendWindow.quantile(0.99))}`}`,
    );
  }
}

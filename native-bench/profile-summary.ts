/**
 * Summarise a V8 .cpuprofile (from `--cpu-prof`, e.g. BENCH_PARLEY_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR"):
 * self time by function and by area (package or src/ folder), as shares of the busy (non-idle) samples.
 *
 *   npx tsx native-bench/profile-summary.ts DIR/CPU.*.cpuprofile [--top 25] [--timeline] [--from 12 --to 17]
 *
 * --timeline prints busy ms per second of the profile (to find the bench's measured window: the steady stretch
 * between the mints and the ends); --from/--to (seconds since the profile started) keep only that stretch.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  options: {
    top: { type: 'string', default: '25' },
    timeline: { type: 'boolean', default: false },
    from: { type: 'string' },
    to: { type: 'string' },
  },
  allowPositionals: true,
});
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const from = Number(values.from ?? 0) * 1e6;
  const to = values.to === undefined ? Infinity : Number(values.to) * 1e6;
  const perSecond: number[] = [];
  let t = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    const name = byId.get(id)!.callFrame.functionName;
    if (name !== '(idle)') perSecond[Math.floor(t / 1e6)] = (perSecond[Math.floor(t / 1e6)] ?? 0) + dt;
    if (t < from || t > to) return;
    self.set(id, (self.get(id) ?? 0) + dt);
  });
  if (values.timeline)
    process.stdout.write(
      `busy ms per second: ${Array.from(perSecond, (v, i) => `${i}s:${Math.round((v ?? 0) / 1e3)}`).join(' ')}\n`,
    );
  let idle = 0;
  let busy = 0;
  const fn = new Map<string, number>();
  const area = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || (functionName === '(program)' && url === '')) {
      if (functionName === '(idle)') idle += us;
      else {
        busy += us;
        fn.set('(program: native, not attributed)', (fn.get('(program: native, not attributed)') ?? 0) + us);
        area.set('(program)', (area.get('(program)') ?? 0) + us);
      }
      continue;
    }
    busy += us;
    const where = url
      .replace(/^file:\/\//, '')
      .replace(/.*\/node_modules\//, 'node_modules/')
      .replace(/.*\/(src|dist|parley-bench\/dist)\//, 'src/');
    const key = `${functionName || '(anonymous)'} ${where ? `${where.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '(native)'}`;
    fn.set(key, (fn.get(key) ?? 0) + us);
    const a =
      where === ''
        ? `(native) ${functionName}`
        : where.startsWith('node_modules/')
          ? where.split('/').slice(0, 2).join('/')
          : where.startsWith('node:')
            ? where
            : where.split('/').slice(0, 3).join('/');
    area.set(a, (area.get(a) ?? 0) + us);
  }
  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1)}%`.padStart(6);
  const top = Number(values.top);
  process.stdout.write(
    `${file}\nbusy ${(busy / 1e3).toFixed(0)} ms, idle ${(idle / 1e3).toFixed(0)} ms\n\nby area (self time, share of busy):\n`,
  );
  for (const [k, v] of [...area].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(v)}  ${k}\n`);
  process.stdout.write('\nby function:\n');
  for (const [k, v] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(v)}  ${k}\n`);
  process.stdout.write('\n');
}

import { spawnSync } from 'node:child_process';
import { cpus, freemem, platform, release, totalmem } from 'node:os';
import { ROOT } from './children.js';

export interface MachineInfo {
  cpuModel: string;
  cpuCount: number;
  platform: string;
  kernel: string;
  memoryGb: number;
  freeMemoryGb: number;
  node: string;
  commit: string;
  /** True when the working tree had uncommitted changes (the figures then describe more than `commit`). */
  dirty: boolean;
}

function git(args: string[]): string | undefined {
  const out = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

export function describeMachine(): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cpuCount: list.length,
    platform: platform(),
    kernel: release(),
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    freeMemoryGb: Math.round((freemem() / 2 ** 30) * 10) / 10,
    node: process.version,
    commit: git(['rev-parse', 'HEAD']) ?? 'unknown',
    dirty: (git(['status', '--porcelain', '--untracked-files=no']) ?? '').length > 0,
  };
}

/**
 * Who runs where. The server under test gets core 0 to itself when it can; the simulator and the load generator
 * share what is left (on 2 cores: core 1). Recorded in the results so a reader knows what shared a core.
 */
export interface CpuPlan {
  server: number[];
  simulator: number[];
  generator: number[];
  note: string;
}

export function planCpus(count: number, tasksetAvailable: boolean): CpuPlan {
  const all = Array.from({ length: count }, (_, i) => i);
  if (!tasksetAvailable || count < 2) {
    return {
      server: [],
      simulator: [],
      generator: [],
      note: `no pinning (${count < 2 ? 'one core' : 'taskset not found or --no-pin'}): every process shares all cores`,
    };
  }
  if (count === 2) {
    return {
      server: [0],
      simulator: [1],
      generator: [1],
      note: 'taskset: server under test on core 0; simulator, load generator and wrk share core 1',
    };
  }
  if (count === 3) {
    return {
      server: [0],
      simulator: [1],
      generator: [2],
      note: 'taskset: server core 0, simulator core 1, load generator and wrk core 2',
    };
  }
  return {
    server: [0],
    simulator: [1],
    generator: all.slice(2),
    note: `taskset: server core 0, simulator core 1, load generator and wrk cores 2-${count - 1}`,
  };
}

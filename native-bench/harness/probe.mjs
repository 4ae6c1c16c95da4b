/**
 * Preloaded into every server under test (`node --import <this file> ...`) when BENCH_PROBE_DIR is set, so the
 * runner can read figures only the process itself knows, at moments it chooses, without touching the server's code:
 *
 * - SIGWINCH: two full garbage collections, then `v8.getHeapStatistics()` and `process.memoryUsage()` are written to
 *   `$BENCH_PROBE_DIR/<pid>-<n>.json` (heap bytes per session = the difference between two such samples / N).
 * - SIGUSR2: the event-loop delay histogram since the previous SIGUSR2 (p50/p99/max, ms) and the garbage
 *   collections in that time (count, total and longest pause, per kind) are written the same way and reset. Only
 *   with BENCH_PROBE_ELD=1: the monitor is a 10 ms libuv timer, a cost the plain runs do not pay.
 *
 * Plain ESM JavaScript so it loads the same in front of built Parley and of the tsx baselines. SIGWINCH's default
 * action is "ignore", so a server without this preload is unaffected by a stray signal.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const dir = process.env.BENCH_PROBE_DIR;
if (dir) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  let n = 0;
  const write = (record) => writeFileSync(join(dir, `${process.pid}-${++n}.json`), JSON.stringify({ at: Date.now(), ...record }));
  process.on('SIGWINCH', () => {
    gc();
    gc();
    const heap = getHeapStatistics();
    const mem = process.memoryUsage();
    write({ kind: 'heap', usedHeapSize: heap.used_heap_size, totalHeapSize: heap.total_heap_size, external: mem.external, arrayBuffers: mem.arrayBuffers, rss: mem.rss });
  });
  if (process.env.BENCH_PROBE_ELD === '1') {
    const eld = monitorEventLoopDelay({ resolution: 10 });
    eld.enable();
    // GC pauses by kind (1 minor/scavenge, 2 major/mark-compact, 4 incremental marking, 8 weak callbacks).
    let gcs = {};
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const kind = String(entry.detail?.kind ?? entry.kind ?? 0);
        const g = (gcs[kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
        g.count++;
        g.totalMs += entry.duration;
        if (entry.duration > g.maxMs) g.maxMs = entry.duration;
      }
    }).observe({ entryTypes: ['gc'] });
    process.on('SIGUSR2', () => {
      const ms = (ns) => Math.round(ns / 1e4) / 100;
      for (const g of Object.values(gcs)) {
        g.totalMs = Math.round(g.totalMs * 100) / 100;
        g.maxMs = Math.round(g.maxMs * 100) / 100;
      }
      write({ kind: 'eld', p50Ms: ms(eld.percentile(50)), p99Ms: ms(eld.percentile(99)), maxMs: ms(eld.max), meanMs: ms(eld.mean), gc: gcs });
      eld.reset();
      gcs = {};
    });
  }
}

/**
 * Preloaded into every server under test (`node --import <this file> ...`) when BENCH_PROBE_DIR is set, so the
 * runner can read figures only the process itself knows, at moments it chooses, without touching the server's code:
 *
 * - SIGWINCH: two full garbage collections, then `v8.getHeapStatistics()` and `process.memoryUsage()` are written to
 *   `$BENCH_PROBE_DIR/<pid>-<n>.json` (heap bytes per session = the difference between two such samples / N), with
 *   the RSS and V8's physical young-generation and whole-heap sizes as the signal found them (before the GCs). With
 *   BENCH_PROBE_SNAPSHOT_DIR set, a heap snapshot is written there first (`<pid>-<n>.heapsnapshot`, named in the
 *   record): harness/heap-snapshot.ts compares two of them by constructor.
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
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';

const dir = process.env.BENCH_PROBE_DIR;
if (dir) {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const snapshotDir = process.env.BENCH_PROBE_SNAPSHOT_DIR;
  let n = 0;
  const write = (record) =>
    writeFileSync(join(dir, `${process.pid}-${++n}.json`), JSON.stringify({ at: Date.now(), ...record }));
  process.on('SIGWINCH', () => {
    // What the RSS is made of as the signal finds it (before the GCs): V8's young generation, the rest of V8's heap,
    // and everything outside it (native allocations: sockets, buffers, uWS), all physical bytes.
    const rssNow = process.memoryUsage.rss();
    let youngBytes = 0;
    let v8Bytes = 0;
    for (const space of getHeapSpaceStatistics()) {
      v8Bytes += space.physical_space_size;
      if (space.space_name === 'new_space' || space.space_name === 'new_large_object_space')
        youngBytes += space.physical_space_size;
    }
    gc();
    gc();
    const heap = getHeapStatistics();
    const mem = process.memoryUsage();
    // Written before the record, so the record's appearance means the snapshot is complete.
    const snapshot = snapshotDir
      ? writeHeapSnapshot(join(snapshotDir, `${process.pid}-${n + 1}.heapsnapshot`))
      : undefined;
    write({
      kind: 'heap',
      usedHeapSize: heap.used_heap_size,
      totalHeapSize: heap.total_heap_size,
      external: mem.external,
      arrayBuffers: mem.arrayBuffers,
      rss: mem.rss,
      rssBeforeGc: rssNow,
      youngBytes,
      v8Bytes,
      snapshot,
    });
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
      write({
        kind: 'eld',
        p50Ms: ms(eld.percentile(50)),
        p99Ms: ms(eld.percentile(99)),
        maxMs: ms(eld.max),
        meanMs: ms(eld.mean),
        gc: gcs,
      });
      eld.reset();
      gcs = {};
    });
  }
}

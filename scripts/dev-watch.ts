/**
 * What `npm run dev` (scripts/dev.ts) is made of: a debounced watch over folders, and a serial task runner that
 * folds the changes made while a task runs into one more run.
 */
import { watch, type FSWatcher } from 'node:fs';
import { relative } from 'node:path';

/** Editor swap and backup files, and build output, never trigger a rebuild. */
const IGNORED = /(^|[\\/])(\.#|#)|~$|\.(swp|swx|tmp)$|(^|[\\/])(node_modules|dist)([\\/]|$)/;

/**
 * Runs `task` now and again after every change, never two at once: changes made while it runs cause exactly one
 * more run when it ends. A task that throws is reported to `onError` and the runner waits for the next change.
 */
export function serialTask(task: () => Promise<void>, onError: (err: unknown) => void) {
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): Promise<void> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await task();
        } catch (err) {
          onError(err);
        }
      } while (again);
    })().finally(() => (running = undefined));
    return running;
  };
  return { run, idle: () => running ?? Promise.resolve() };
}

/**
 * Calls `onChange` (with the changed paths, relative to `root`) once the given files and folders (recursively)
 * have been quiet for `quietMs` after a change. Paths that do not exist are skipped. Returns a closer.
 */
export function watchPaths(
  root: string,
  paths: readonly string[],
  onChange: (changed: string[]) => void,
  quietMs = 150,
): () => void {
  const watchers: FSWatcher[] = [];
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  for (const path of paths) {
    let watcher: FSWatcher;
    try {
      watcher = watch(path, { recursive: true }, (_event, file) => {
        const full = file === null ? path : `${path}/${file.toString()}`;
        const rel = relative(root, full);
        if (IGNORED.test(rel)) return;
        changed.add(rel);
        clearTimeout(timer);
        timer = setTimeout(() => {
          const list = [...changed];
          changed.clear();
          onChange(list);
        }, quietMs);
      });
    } catch {
      continue; // not there (yet): nothing to watch
    }
    watcher.on('error', () => undefined);
    watchers.push(watcher);
  }
  return () => {
    clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}

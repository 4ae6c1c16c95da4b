import type { Logger } from '../log/index.js';

/**
 * A background loop over a durable Postgres queue (ingestion jobs, evals): run one unit of work, go again at once
 * while there is work or someone kicked, otherwise sleep `pollMs`. The app starts it on listen and stops it on
 * close; never at import or while the route table is built.
 */
export interface PollLoop {
  start(): void;
  /** Stops claiming, aborts `signal` (the unit in hand gives up its lease), waits for the loop to end. */
  stop(): Promise<void>;
  /** Wake the loop now (work was just queued on this instance). */
  kick(): void;
  /** Aborted by stop(); a fresh one for every start(). */
  readonly signal: AbortSignal;
}

export interface PollLoopOptions {
  /** Names the loop in logs, e.g. "ingestion worker". */
  name: string;
  pollMs: number;
  log: Logger;
  /** Claims and processes at most one unit; resolves whether one was found. */
  runOnce: () => Promise<boolean>;
}

export function createPollLoop(options: PollLoopOptions): PollLoop {
  const { name, pollMs, log, runOnce } = options;
  let running = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  let kicked = false;
  let stopping = new AbortController();

  async function run(): Promise<void> {
    while (running) {
      let found = false;
      try {
        found = await runOnce();
      } catch (err) {
        if (!running) break;
        log.error({ err, loop: name }, 'background loop iteration failed');
      }
      if (!running) break;
      if (found || kicked) {
        kicked = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  return {
    get signal() {
      return stopping.signal;
    },
    start() {
      if (running) return;
      running = true;
      if (stopping.signal.aborted) stopping = new AbortController();
      loop = run();
    },
    async stop() {
      if (!running) return;
      running = false;
      stopping.abort();
      wake?.();
      await loop;
    },
    kick() {
      kicked = true;
      wake?.();
    },
  };
}

import { dependencyUnavailable } from '../errors/index.js';
import type { Sql } from './types.js';

interface CancellableQuery {
  then: (onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) => Promise<unknown>;
  /** Only used to tell a postgres.js query from a helper's builder. */
  cancel: () => unknown;
}

function isQuery(value: unknown): value is CancellableQuery {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CancellableQuery).then === 'function' &&
    typeof (value as CancellableQuery).cancel === 'function'
  );
}

function timeoutError(ms: number): Error {
  return dependencyUnavailable('database', new Error(`PostgreSQL did not answer within ${ms} ms`));
}

/**
 * The whole-query deadline (docs/house-rules.md rule 18: a stalled dependency is a 503, never a hang). postgres.js
 * queues a query until a connection takes it and has no timeout of its own: while PostgreSQL refuses connections,
 * queued queries wait through every reconnect backoff (they hung past 10 s). Every query awaited through the returned
 * client settles within `ms`: on time, or rejected with the 503 `DEPENDENCY_UNAVAILABLE` error (see below why it is not
 * cancelled). `sql.begin` gets the same deadline for acquiring its connection; a transaction that starts after its
 * caller gave up rolls back at once instead of running late. Inside a transaction, statements are bounded by the
 * connection's deadline (deadline-socket.ts).
 *
 * Fragments (`sql\`...\`` nested in another query) are never awaited, so they are never timed.
 */
export function withQueryDeadline(sql: Sql, ms: number): Sql {
  const timed = (query: CancellableQuery): CancellableQuery => {
    const original = query.then;
    let settled: Promise<unknown> | undefined;
    query.then = function then(onFulfilled, onRejected) {
      settled ??= new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          // Not cancelled: postgres.js's cancel of a query that is the first of a connection being opened leaves that
          // connection stuck for good once it opens, and a running query's cancel needs the very server that is not
          // answering. A query still queued when the database returns runs then; the writes on the voice path are
          // fenced or idempotent for that reason, and a transaction whose caller gave up rolls back (below).
          reject(timeoutError(ms));
        }, ms);
        original.call(
          query,
          (value: unknown) => {
            clearTimeout(timer);
            resolve(value);
          },
          (err: unknown) => {
            clearTimeout(timer);
            reject(err);
          },
        );
      });
      return settled.then(onFulfilled, onRejected);
    };
    return query;
  };

  const begin = (
    target: Sql,
    original: (...args: unknown[]) => Promise<unknown>,
    args: unknown[],
  ): Promise<unknown> => {
    const fn = args[args.length - 1] as (tx: unknown) => unknown;
    let started = false;
    let abandoned = false;
    const guarded = async (tx: unknown) => {
      started = true;
      if (abandoned) throw timeoutError(ms);
      return fn(tx);
    };
    const running = original.apply(target, [...args.slice(0, -1), guarded]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (started) return; // running: its statements have the connection's deadline
        abandoned = true;
        reject(timeoutError(ms));
      }, ms);
      running.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  };

  return new Proxy(sql, {
    apply(target, thisArg, args) {
      const result: unknown = Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args);
      return isQuery(result) ? timed(result) : result;
    },
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop === 'unsafe' || prop === 'file') {
        return (...args: unknown[]) => {
          const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
          return isQuery(result) ? timed(result) : result;
        };
      }
      if (prop === 'begin')
        return (...args: unknown[]) => begin(target, value as (...a: unknown[]) => Promise<unknown>, args);
      return value;
    },
  });
}

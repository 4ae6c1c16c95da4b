import { isConnectionLost } from './deadline-socket.js';
import type { Sql, TransactionSql } from './types.js';

type Body = (tx: TransactionSql) => unknown;

/**
 * `sql.begin` on a connection reserved before `BEGIN` is written, never after.
 *
 * postgres.js 3.4.x sends a transaction's `BEGIN` through the pool like any query: onto an idle connection, or
 * pipelined behind other queries on a busy one, and marks that connection reserved only when the write reports room
 * for more. Under load a `BEGIN` that is the query filling a connection's pipeline (100 queued) skips the mark: the
 * server opens the transaction, the client answers `UNSAFE_TRANSACTION` (a 500 for the caller), and the connection goes
 * back to the pool "idle in transaction", so unrelated queries then run inside it. Here the connection is taken with
 * `sql.reserve()` first (an idle connection, or the next one to become idle), so `BEGIN` only ever goes to a connection
 * that is already this transaction's; `COMMIT` or `ROLLBACK` follow on it and it is released.
 *
 * When the connection itself is lost mid-transaction (the server closes it, or the query deadline cuts it), the
 * server has rolled back, postgres.js has already put the connection back into its pool for other work: nothing more
 * is sent on it and it is not released a second time.
 */
export function reservingBegin(sql: Sql): Sql['begin'] {
  const begin = async (...args: unknown[]): Promise<unknown> => {
    const fn = args[args.length - 1] as Body;
    const mode = args.length > 1 ? String(args[0]).replace(/[^a-z ]/gi, '') : '';
    const reserved = await sql.reserve();
    let lost = false;
    let done = false;
    const note = (error: unknown): never => {
      if (isConnectionLost(error)) lost = true;
      throw error;
    };
    try {
      // A plain BEGIN goes out in the same write as the transaction's first statements (one round trip fewer on
      // every transaction): it can only fail with the connection, and then so do the statements behind it. A BEGIN
      // with options (isolation, read only) is awaited first: its failure must stop the statements.
      const begun: Promise<unknown> =
        mode === ''
          ? reserved.unsafe('begin').then(
              () => undefined,
              (error: unknown) => {
                if (isConnectionLost(error)) lost = true;
                return error;
              },
            )
          : reserved.unsafe(`begin ${mode}`).then(() => undefined, note);
      if (mode !== '') await begun;
      const tx = scoped(
        reserved,
        () => lost || done,
        () => (lost = true),
      );
      let result: unknown;
      try {
        const value = fn(tx);
        result = await (Array.isArray(value) ? Promise.all(value) : value);
        const beginError = await begun;
        if (beginError !== undefined) throw beginError;
      } catch (error) {
        if (isConnectionLost(error)) lost = true;
        if (!lost) await reserved.unsafe('rollback').catch(note);
        throw error;
      }
      await reserved.unsafe('commit').catch(note);
      return result;
    } finally {
      done = true;
      if (!lost) reserved.release();
    }
  };
  return begin as unknown as Sql['begin'];
}

/**
 * The transaction's `sql`: the reserved connection's, refusing new statements once the connection is lost or the
 * transaction is over (by then the connection may be running someone else's work). A statement that fails because
 * the connection is gone reports it (`onLost`) before its caller sees the error, so nothing its caller does next
 * reaches the connection.
 */
function scoped(reserved: Sql, over: () => boolean, onLost: () => void): TransactionSql {
  const refuse = () => new Error('statement issued outside its transaction (the transaction is over)');
  const watched = (result: unknown): unknown => {
    if (typeof result !== 'object' || result === null || typeof (result as PromiseLike<unknown>).then !== 'function')
      return result;
    const query = result as { then: PromiseLike<unknown>['then'] };
    const then = query.then;
    query.then = function (onFulfilled, onRejected) {
      return then.call(query, onFulfilled, (error: unknown) => {
        if (isConnectionLost(error)) onLost();
        if (onRejected) return onRejected(error);
        throw error;
      });
    } as PromiseLike<unknown>['then'];
    return query;
  };
  return new Proxy(reserved, {
    apply(target, thisArg, args) {
      if (over()) throw refuse();
      return watched(Reflect.apply(target as unknown as (...a: unknown[]) => unknown, thisArg, args));
    },
    get(target, prop, receiver) {
      if (prop === 'savepoint')
        return () => {
          throw new Error('savepoints are not supported here');
        };
      const value: unknown = Reflect.get(target, prop, receiver);
      if (prop !== 'unsafe' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (over()) throw refuse();
        return watched((value as (...a: unknown[]) => unknown).apply(target, args));
      };
    },
  }) as unknown as TransactionSql;
}

/** `sql` with {@link reservingBegin} in place of its `begin`; every other property is the client's own. */
export function withReservingBegin(sql: Sql): Sql {
  const begin = reservingBegin(sql);
  return new Proxy(sql, {
    get(target, prop, receiver) {
      if (prop === 'begin') return begin;
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

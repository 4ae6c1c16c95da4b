import type postgres from 'postgres';

/** The postgres.js client, passed down; `sql.begin` hands a scoped `sql` to multi-statement writes. */
export type Sql = postgres.Sql<Record<string, never>>;
export type TransactionSql = postgres.TransactionSql<Record<string, never>>;
